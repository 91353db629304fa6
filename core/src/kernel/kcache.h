// kcache.h: the on-disk cache of compiled kernels (shared objects).
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_KCACHE_H_
#define DC_KERNEL_KCACHE_H_

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

//===-- The kernel cache ------------------------------------------------===//
//
// Kernels are compiled at run time into shared objects that the engine
// dlopens. A compile costs 50-100 ms, so its result is kept on disk under a
// key: the SHA-256 of everything that determines the output (source,
// options, compiler identity, ABI version), computed by the caller. A hit
// costs one open, fstat, read and close plus a SHA-256 of the entry: about
// 0.15 ms for a 30 KB entry, most of it the hash (no directory scans).
//
// Entry format. One file per key, named `<64 lowercase hex of key>.so`:
//
//   offset 0         the shared object, byte for byte
//   so_size          the caller's metadata blob
//   + meta_size      the footer, 56 bytes, integers little-endian:
//                      "DCKC", u32 format version (1), u64 so_size,
//                      u64 meta_size, SHA-256 of all bytes before the footer
//
// Because the shared object sits unchanged at offset 0, the entry file
// itself can be given to dlopen: the ELF loader maps only what the program
// headers name and ignores bytes past them.
//
// Concurrency. Several threads and processes may look up and store the same
// keys at once. A store writes a private temporary file in the cache
// directory (mkostemp) and renames it over the entry's name; rename(2) is
// atomic, so a reader opens either the old complete entry or the new
// complete one, never a torn one, and an entry file is never modified in
// place once it has its name. The checksum catches anything else: an entry
// cut short by a crash (stores do not fsync; see kcache.c), a disk error,
// a stray file. Such an entry counts as corrupt, is deleted, and the lookup
// misses, so the caller compiles again and stores a fresh one.
//
// Temporary files are hidden `.<hex>.tmp-<pid>-<random>` files; lookups
// never read them. Those of a writer that died before its rename are
// removed when a cache is opened: once idle 10 s when their writer's
// process is gone, once idle 15 minutes in any case.
//
// Failure. The cache never stops the engine: a lookup that cannot read an
// entry misses, and a store that fails returns a status the caller may log
// before it uses its own build uncached. If the directory itself proves
// unusable (it cannot be resolved or created, or a file is in the way) the
// cache says so once through its log callback (at DC_LOG_WARN) and
// behaves as "off" from then on. Unreadable entries are logged at
// DC_LOG_WARN, deleted corrupt ones at DC_LOG_INFO.
//
// Thread safety: a dc__kcache_t is thread-safe. Its state after creation
// is read-only apart from atomic counters and the atomic "off" flag.

typedef struct dc__kcache_t dc__kcache_t;

typedef struct dc__kcache_stats_t {
  uint64_t hits;     // lookups that returned an entry
  uint64_t misses;   // lookups that did not (corrupt and failed ones too)
  uint64_t stores;   // entries written
  uint64_t corrupt;  // entries found corrupt, and deleted
  uint64_t errors;   // lookups that failed on I/O, and failed stores
} dc__kcache_stats_t;

// Receives the cache's diagnostics. Called from whichever thread hit the
// condition, so it must be thread-safe. |message| is valid for the call.
typedef void (*dc__kcache_log_fn_t)(void* user_data, dc_log_level_t level,
                                    const char* message);

// A path buffer of this size always holds what lookup and store write: the
// resolved directory is limited to DC_KCACHE_DIR_MAX chars.
#define DC_KCACHE_PATH_SIZE 4096
#define DC_KCACHE_DIR_MAX (DC_KCACHE_PATH_SIZE - 96)

// Entries larger than this are refused by store and treated as corrupt by
// lookup (which reads a whole entry into memory).
#define DC_KCACHE_MAX_ENTRY_SIZE ((uint64_t)256 << 20)

// Creates a cache on the directory |dir|. Borrows |dir|. NULL or "" picks
// the default: $DC_CACHE_DIR if set and not empty, else
// $XDG_CACHE_HOME/dclua/kernels (if absolute), else
// $HOME/.cache/dclua/kernels. "off" (in |dir| or in $DC_CACHE_DIR, any
// case) disables the disk: every lookup misses and store is a no-op that
// succeeds. A relative directory is made absolute against the current
// working directory, once, here.
//
// The directory is not created here but by the first store (mode 0700,
// parents too). If it cannot be resolved, is too long, or exists as
// something other than a directory, the cache logs a warning through
// |log_fn| (may be NULL; called with |log_user_data|) and is "off"; that
// is not a failure of this call.
//
// Returns DC_ERR_OUT_OF_MEMORY if |allocator| fails.
DC_INTERNAL dc_status_t dc__kcache_create(dc_allocator_t allocator,
                                          const char* dir,
                                          dc__kcache_log_fn_t log_fn,
                                          void* log_user_data,
                                          dc__kcache_t** out_cache);

// Destroys |cache| (NULL is a no-op). Leaves dc_last_error() alone.
DC_INTERNAL void dc__kcache_destroy(dc__kcache_t* cache);

// Returns the resolved directory, or "off" if the disk is disabled (from
// the start or since the directory failed). Valid while |cache| lives.
DC_INTERNAL const char* dc__kcache_dir(const dc__kcache_t* cache);

// Looks up the entry for |key|.
//
// On a hit, returns DC_OK, sets |*out_meta| to a copy of the entry's
// metadata allocated with the cache's allocator (free it with
// dc_allocator_free(allocator, *out_meta, *out_meta_size); NULL when the
// size is 0), and writes to |path| the path of the entry file, whose
// shared object was just verified.
//
// What the path guarantees: entry files are replaced only by rename and
// never rewritten in place, so a dlopen of |path| right after this call
// maps either the very file verified here or a complete newer entry that
// another writer stored under the same key (an equivalent build, since the
// key covers everything that determines it). Once dlopen has mapped it,
// later replacement or deletion of the entry does not affect the mapping.
// The one race left: the entry may be deleted between this call and the
// dlopen (by a reader that found it corrupt, or by someone clearing the
// cache), in which case dlopen fails; treat that as a miss and compile.
//
// Returns DC_ERR_NOT_FOUND on a miss: no entry, the cache is off, the entry
// is corrupt (it is then deleted and counted in |corrupt|), or it could not
// be read (counted in |errors| and logged). Returns DC_ERR_INVALID_ARGUMENT
// if |path_size| cannot hold the entry's path (DC_KCACHE_PATH_SIZE always
// can), and DC_ERR_OUT_OF_MEMORY if the allocator fails. On any failure
// |*out_meta| is NULL and |path| is "".
DC_INTERNAL dc_status_t dc__kcache_lookup(dc__kcache_t* cache,
                                          const uint8_t key[32], char* path,
                                          size_t path_size, void** out_meta,
                                          size_t* out_meta_size);

// Stores the shared object at |so_path| with |meta_size| bytes of |meta|
// under |key|. Borrows everything: the file at |so_path| is copied and
// left where it is. The entry appears atomically (see the essay above),
// replacing any entry the key had. Writes the entry's path to |path|.
// When the cache is off, stores nothing, writes |so_path| to |path| (so
// the caller may always dlopen |path|) and returns DC_OK.
//
// Returns DC_ERR_INVALID_ARGUMENT if |so_path| is empty or |path_size| is
// too small, DC_ERR_OUT_OF_RANGE if the entry would exceed
// DC_KCACHE_MAX_ENTRY_SIZE, DC_ERR_NOT_FOUND if |so_path| cannot be
// opened, DC_ERR_PERMISSION_DENIED or DC_ERR_FAILED_PRECONDITION if the
// directory cannot be created or written (the cache is then off),
// DC_ERR_RESOURCE_EXHAUSTED if the disk is full, and DC_ERR_UNAVAILABLE on
// other I/O errors; the message says which file and why. On failure
// nothing is left in the directory and |path| is "".
DC_INTERNAL dc_status_t dc__kcache_store(dc__kcache_t* cache,
                                         const uint8_t key[32],
                                         const char* so_path,
                                         const void* meta, size_t meta_size,
                                         char* path, size_t path_size);

// Copies the counters of |cache| into |out|. Each counter is read
// atomically, the set as a whole is not a snapshot.
DC_INTERNAL void dc__kcache_stats(const dc__kcache_t* cache,
                                  dc__kcache_stats_t* out);

#endif  // DC_KERNEL_KCACHE_H_
