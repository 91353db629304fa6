// kcache.c: the on-disk kernel cache: entry files, atomic stores, checks.
// SPDX-License-Identifier: MIT
#include "kernel/kcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel/sha256.h"

// Durability: stores do not fsync. An entry is a cache line, not data: if
// the machine crashes after the rename but before the data reaches the
// disk, the entry may come back empty or cut short, and the checksum then
// marks it corrupt, so the next lookup deletes it and the kernel is
// compiled again. An fsync would add milliseconds to every store (more
// than the copy itself) to protect something that costs one compile.

// The footer that ends every entry (see kcache.h), little-endian.
#define FOOTER_SIZE 56
#define FOOTER_VERSION_AT 4
#define FOOTER_SO_SIZE_AT 8
#define FOOTER_META_SIZE_AT 16
#define FOOTER_DIGEST_AT 24
#define FORMAT_VERSION 1u
static const char kMagic[4] = {'D', 'C', 'K', 'C'};

#define KEY_HEX_SIZE (2 * 32 + 1)
#define COPY_CHUNK 16384

// Temporary files left by writers that stopped (killed during a store).
// A store writes its temporary file in milliseconds, and the file's
// modification time moves with every write; so one untouched for
// STALE_AFTER_S is left over, whoever wrote it, and one whose writer's
// process is gone (its pid is in the name) is left over once untouched for
// DEAD_WRITER_AFTER_S, a grace that covers a writer of another machine
// sharing the directory, whose pid means nothing here.
#define STALE_AFTER_S (15 * 60)
#define DEAD_WRITER_AFTER_S 10
#define TEMP_MARK ".tmp-"

// Everything but the counters and the two flags is fixed at creation.
// |off| only ever goes from false to true; |dir_ready| caches "the
// directory exists", so stores skip the mkdir after the first one.
struct dc__kcache_t {
  dc_allocator_t allocator;
  dc__kcache_log_fn_t log_fn;
  void* log_user_data;
  atomic_bool off;
  atomic_bool dir_ready;
  _Atomic uint64_t hits;
  _Atomic uint64_t misses;
  _Atomic uint64_t stores;
  _Atomic uint64_t corrupt;
  _Atomic uint64_t errors;
  char dir[DC_KCACHE_DIR_MAX + 1];  // absolute, no trailing slash
};

// An entry file read into memory, and which file it was.
typedef struct entry_t {
  uint8_t* data;
  size_t size;
  dev_t dev;
  ino_t ino;
} entry_t;

//===-- Small helpers ---------------------------------------------------===//

static void store_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static void store_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t load_le32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

static uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

static void count(_Atomic uint64_t* counter) {
  atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

static void kc_log(const dc__kcache_t* cache, dc_log_level_t level,
                   const char* format, ...) DC_PRINTF_LIKE(3, 4);

static void kc_log(const dc__kcache_t* cache, dc_log_level_t level,
                   const char* format, ...) {
  if (cache->log_fn == NULL) return;
  char message[DC_KCACHE_PATH_SIZE + 256];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  cache->log_fn(cache->log_user_data, level, message);
}

// Turns the disk off for good, saying why the first time only.
static void go_off(dc__kcache_t* cache, const char* why) {
  if (!atomic_exchange(&cache->off, true)) {
    kc_log(cache, DC_LOG_WARN, "kernel cache: %s; disk cache disabled", why);
  }
}

// The status that best says what |err| means for a cache operation.
static dc_status_t status_of_errno(int err) {
  switch (err) {
    case EACCES: case EPERM: case EROFS:
      return DC_ERR_PERMISSION_DENIED;
    case ENOSPC: case EDQUOT: case EMFILE: case ENFILE:
      return DC_ERR_RESOURCE_EXHAUSTED;
    case ENOENT:
      return DC_ERR_NOT_FOUND;
    case ENOTDIR: case EEXIST: case ENAMETOOLONG: case ELOOP:
      return DC_ERR_FAILED_PRECONDITION;
    case ENOMEM:
      return DC_ERR_OUT_OF_MEMORY;
    default:
      return DC_ERR_UNAVAILABLE;
  }
}

static dc_status_t io_fail(int err, const char* what, const char* path) {
  return DC_FAIL(status_of_errno(err), "kernel cache: cannot %s '%s': %s",
                 what, path, strerror(err));
}

// Copies |src| into the caller's |path| buffer, or fails if it is too small.
static dc_status_t give_path(const char* src, char* path, size_t path_size,
                             const char* fn) {
  size_t need = strlen(src) + 1;
  if (need > path_size) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: path buffer of %zu bytes cannot hold %zu", fn,
                   path_size, need);
  }
  memcpy(path, src, need);
  return DC_OK;
}

//===-- Directories -----------------------------------------------------===//

// The length of |path| without trailing slashes, so that appending
// "/name" gives no "//".
static int trimmed_length(const char* path) {
  size_t n = strlen(path);
  while (n > 0 && path[n - 1] == '/') --n;
  return (int)DC_MIN(n, (size_t)DC_KCACHE_PATH_SIZE);
}

// Writes the directory |dir| or the environment names into |out|. Returns
// false, with the reason in |why|, if there is none or it is too long.
static bool pick_dir(const char* dir, char* out, size_t size, char* why,
                     size_t why_size) {
  const char* env = NULL;
  int n = -1;
  if (dir != NULL && dir[0] != '\0') {
    n = snprintf(out, size, "%s", dir);
  } else if ((env = getenv("DC_CACHE_DIR")) != NULL && env[0] != '\0') {
    n = snprintf(out, size, "%s", env);
  } else if ((env = getenv("XDG_CACHE_HOME")) != NULL && env[0] == '/') {
    // The XDG spec says to ignore a relative XDG_CACHE_HOME.
    n = snprintf(out, size, "%.*s/dclua/kernels", trimmed_length(env), env);
  } else if ((env = getenv("HOME")) != NULL && env[0] != '\0') {
    n = snprintf(out, size, "%.*s/.cache/dclua/kernels", trimmed_length(env),
                 env);
  } else {
    snprintf(why, why_size, "no directory: DC_CACHE_DIR, XDG_CACHE_HOME "
             "and HOME are all unset");
    return false;
  }
  if (n < 0 || (size_t)n >= size) {
    snprintf(why, why_size, "the directory name is too long");
    return false;
  }
  return true;
}

// Makes |base| absolute (against the working directory) into |out|,
// without trailing slashes. Returns false, with the reason in |why|, if
// that fails or the result is longer than DC_KCACHE_DIR_MAX.
static bool absolute_dir(const char* base, char* out, char* why,
                         size_t why_size) {
  char cwd[DC_KCACHE_PATH_SIZE] = "";
  if (base[0] != '/' && getcwd(cwd, sizeof(cwd)) == NULL) {
    snprintf(why, why_size, "cannot make '%s' absolute: %s", base,
             strerror(errno));
    return false;
  }
  int n = snprintf(out, DC_KCACHE_DIR_MAX + 1, "%s%s%s", cwd,
                   cwd[0] != '\0' ? "/" : "", base);
  if (n < 0 || n > DC_KCACHE_DIR_MAX) {
    snprintf(why, why_size, "the directory name is longer than %d chars",
             DC_KCACHE_DIR_MAX);
    out[0] = '\0';
    return false;
  }
  while (n > 1 && out[n - 1] == '/') out[--n] = '\0';
  return true;
}

// Checks what is at |dir| now: nothing (made by the first store) or a
// directory is fine. Returns false, with the reason in |why|, otherwise.
static bool existing_dir_usable(const char* dir, char* why,
                                size_t why_size) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return true;
    snprintf(why, why_size, "'%s' is not a directory", dir);
    return false;
  }
  if (errno == ENOENT) return true;
  snprintf(why, why_size, "cannot use '%s': %s", dir, strerror(errno));
  return false;
}

// Resolves |dir| into |cache->dir|. Returns false if the disk is to be off,
// with the reason in |why| ("" when the caller asked for "off").
static bool resolve_dir(dc__kcache_t* cache, const char* dir, char* why,
                        size_t why_size) {
  char base[DC_KCACHE_PATH_SIZE];
  why[0] = '\0';
  if (!pick_dir(dir, base, sizeof(base), why, why_size)) return false;
  if (dc__str_ieq(base, "off")) return false;
  return absolute_dir(base, cache->dir, why, why_size) &&
         existing_dir_usable(cache->dir, why, why_size);
}

static bool is_dir(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// Creates |dir| and its missing parents with mode 0700, like mkdir -p.
// Safe against other processes doing the same. Returns 0 or an errno.
static int make_dirs(const char* dir) {
  if (mkdir(dir, 0700) == 0) return 0;
  if (errno == EEXIST) return is_dir(dir) ? 0 : ENOTDIR;
  if (errno != ENOENT) return errno;
  char buf[DC_KCACHE_PATH_SIZE];
  dc__strlcpy(buf, dir, sizeof(buf));
  for (char* p = buf + 1; *p != '\0'; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    int rc = mkdir(buf, 0700);
    int err = errno;
    *p = '/';
    if (rc != 0 && err != EEXIST) return err;
  }
  if (mkdir(buf, 0700) != 0 && errno != EEXIST) return errno;
  return is_dir(buf) ? 0 : ENOTDIR;
}

// Fails a store because the directory cannot be used, and turns the disk
// off: every later store would fail the same way.
static dc_status_t dir_unusable(dc__kcache_t* cache, const char* what,
                                int err) {
  char why[DC_KCACHE_PATH_SIZE + 128];
  snprintf(why, sizeof(why), "cannot %s '%s': %s", what, cache->dir,
           strerror(err));
  go_off(cache, why);
  return DC_FAIL(status_of_errno(err), "kernel cache: %s; disk cache "
                 "disabled", why);
}

static dc_status_t ensure_dir(dc__kcache_t* cache) {
  if (atomic_load_explicit(&cache->dir_ready, memory_order_relaxed)) {
    return DC_OK;
  }
  int err = make_dirs(cache->dir);
  if (err != 0) return dir_unusable(cache, "create directory", err);
  atomic_store_explicit(&cache->dir_ready, true, memory_order_relaxed);
  return DC_OK;
}

//===-- Temporary files left behind -------------------------------------===//
//
// Writers name their temporary files `<name>.tmp-<pid>-<random>`: stores
// `.<hex>.tmp-<pid>-<random>`, and the CPU backend's compiler identity file
// `compiler-<h>.id.tmp-<random>` (older stores too had no pid). A writer
// killed between creating one and renaming it leaves it behind, and
// nothing would ever read or remove it; so opening the cache sweeps them
// (sweep_temporaries). Only regular files whose name has the mark are
// considered; entries, directories and links never are.

// The writer's pid in a temporary file's name (after TEMP_MARK: digits,
// then '-'), or 0 when it has none.
static pid_t temp_writer(const char* mark) {
  const char* p = mark + strlen(TEMP_MARK);
  long pid = 0;
  const char* digits = p;
  while (*p >= '0' && *p <= '9' && pid < 1000000000L) {
    pid = pid * 10 + (*p++ - '0');
  }
  return p > digits && *p == '-' && pid > 0 ? (pid_t)pid : 0;
}

// Whether the process |pid| is gone (not merely someone else's).
static bool process_gone(pid_t pid) {
  return kill(pid, 0) != 0 && errno == ESRCH;
}

// Whether the file |name| in |dir_fd| is a temporary file left over.
static bool temp_left_over(int dir_fd, const char* name, time_t now) {
  const char* mark = strstr(name, TEMP_MARK);
  if (mark == NULL || mark == name) return false;
  struct stat st;
  if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISREG(st.st_mode)) {
    return false;
  }
  time_t idle = now > st.st_mtime ? now - st.st_mtime : 0;
  if (idle >= STALE_AFTER_S) return true;
  pid_t writer = temp_writer(mark);
  return writer != 0 && writer != getpid() && idle >= DEAD_WRITER_AFTER_S &&
         process_gone(writer);
}

// Removes the temporary files left over in the cache's directory, if it
// exists, and says how many went (at DC_LOG_INFO). A writer whose file
// goes while it still writes only sees its store fail.
static void sweep_temporaries(dc__kcache_t* cache) {
  int dir_fd = open(cache->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = dir_fd >= 0 ? fdopendir(dir_fd) : NULL;
  if (dir == NULL) {
    if (dir_fd >= 0) close(dir_fd);
    return;  // none yet: the first store makes it
  }
  time_t now = time(NULL);
  unsigned removed = 0;
  for (struct dirent* e; (e = readdir(dir)) != NULL;) {
    if (temp_left_over(dir_fd, e->d_name, now) &&
        unlinkat(dir_fd, e->d_name, 0) == 0) {
      ++removed;
    }
  }
  closedir(dir);
  if (removed > 0) {
    kc_log(cache, DC_LOG_INFO, "kernel cache: removed %u temporary file(s) "
           "that stopped writers left in '%s'", removed, cache->dir);
  }
}

//===-- Lifecycle -------------------------------------------------------===//

dc_status_t dc__kcache_create(dc_allocator_t allocator, const char* dir,
                              dc__kcache_log_fn_t log_fn, void* log_user_data,
                              dc__kcache_t** out_cache) {
  DC_REQUIRE_ARG(out_cache, "dc__kcache_create");
  *out_cache = NULL;
  dc__kcache_t* cache = dc_allocator_calloc(allocator, 1, sizeof(*cache));
  if (cache == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc__kcache_create: cannot allocate %zu bytes",
                   sizeof(*cache));
  }
  cache->allocator = allocator;
  cache->log_fn = log_fn;
  cache->log_user_data = log_user_data;
  atomic_init(&cache->off, false);
  atomic_init(&cache->dir_ready, false);
  atomic_init(&cache->hits, 0);
  atomic_init(&cache->misses, 0);
  atomic_init(&cache->stores, 0);
  atomic_init(&cache->corrupt, 0);
  atomic_init(&cache->errors, 0);
  char why[DC_KCACHE_PATH_SIZE + 128];
  if (!resolve_dir(cache, dir, why, sizeof(why))) {
    atomic_store(&cache->off, true);
    if (why[0] != '\0') {
      kc_log(cache, DC_LOG_WARN, "kernel cache: %s; disk cache disabled",
             why);
    }
  } else {
    sweep_temporaries(cache);
  }
  *out_cache = cache;
  return DC_OK;
}

void dc__kcache_destroy(dc__kcache_t* cache) {
  if (cache == NULL) return;
  dc_allocator_free(cache->allocator, cache, sizeof(*cache));
}

const char* dc__kcache_dir(const dc__kcache_t* cache) {
  return atomic_load(&((dc__kcache_t*)cache)->off) ? "off" : cache->dir;
}

void dc__kcache_stats(const dc__kcache_t* cache, dc__kcache_stats_t* out) {
  dc__kcache_t* c = (dc__kcache_t*)cache;  // atomic loads take non-const
  out->hits = atomic_load_explicit(&c->hits, memory_order_relaxed);
  out->misses = atomic_load_explicit(&c->misses, memory_order_relaxed);
  out->stores = atomic_load_explicit(&c->stores, memory_order_relaxed);
  out->corrupt = atomic_load_explicit(&c->corrupt, memory_order_relaxed);
  out->errors = atomic_load_explicit(&c->errors, memory_order_relaxed);
}

//===-- Lookup ----------------------------------------------------------===//

// Writes the path of |key|'s entry into |out| (DC_KCACHE_PATH_SIZE chars);
// |hex| receives the key in hex.
static void entry_path(const dc__kcache_t* cache, const uint8_t key[32],
                       char hex[KEY_HEX_SIZE], char* out) {
  dc__sha256_hex(key, 32, hex);
  snprintf(out, DC_KCACHE_PATH_SIZE, "%s/%s.so", cache->dir, hex);
}

// Reads all |size| bytes of |fd|. Returns 0, -1 if the file ended early,
// or an errno.
static int read_all(int fd, uint8_t* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return -1;
    done += (size_t)n;
  }
  return 0;
}

// Fails a lookup that could not read |path|: counts and logs it, and
// reports a miss, since the caller's answer to both is to compile.
static dc_status_t read_failed(dc__kcache_t* cache, int err, const char* what,
                               const char* path) {
  count(&cache->errors);
  kc_log(cache, DC_LOG_WARN, "kernel cache: cannot %s '%s': %s", what, path,
         strerror(err));
  return DC_FAIL(DC_ERR_NOT_FOUND, "kernel cache: cannot %s '%s': %s", what,
                 path, strerror(err));
}

// Reads the open entry |fd| whole into |e|. Returns DC_ERR_DATA_LOSS, with
// |*reason| set, if its size alone proves it corrupt.
static dc_status_t read_body(dc__kcache_t* cache, int fd, const char* path,
                             entry_t* e, const char** reason) {
  struct stat st;
  if (fstat(fd, &st) != 0) return read_failed(cache, errno, "stat", path);
  e->dev = st.st_dev;
  e->ino = st.st_ino;
  if (!S_ISREG(st.st_mode)) return read_failed(cache, EISDIR, "read", path);
  if ((uint64_t)st.st_size < FOOTER_SIZE ||
      (uint64_t)st.st_size > DC_KCACHE_MAX_ENTRY_SIZE) {
    *reason = "impossible file size";
    return DC_ERR_DATA_LOSS;
  }
  e->size = (size_t)st.st_size;
  e->data = dc_allocator_malloc(cache->allocator, e->size);
  if (e->data == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "kernel cache: cannot allocate %zu bytes to read '%s'",
                   e->size, path);
  }
  int err = read_all(fd, e->data, e->size);
  if (err == -1) {
    *reason = "shorter than its size";
    return DC_ERR_DATA_LOSS;
  }
  return err == 0 ? DC_OK : read_failed(cache, err, "read", path);
}

// Opens and reads the entry at |path|. Returns DC_ERR_NOT_FOUND if there
// is none or it cannot be read, DC_ERR_DATA_LOSS (with |*reason|) if it is
// visibly corrupt.
static dc_status_t read_entry(dc__kcache_t* cache, const char* path,
                              entry_t* e, const char** reason) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return DC_FAIL(DC_ERR_NOT_FOUND, "kernel cache: no entry '%s'", path);
    }
    return read_failed(cache, errno, "open", path);
  }
  dc_status_t status = read_body(cache, fd, path, e, reason);
  close(fd);
  return status;
}

// Checks the footer and checksum of |e|. Returns NULL and the sizes of its
// parts if it is intact, else what is wrong.
static const char* verify_entry(const entry_t* e, size_t* out_so_size,
                                size_t* out_meta_size) {
  const uint8_t* footer = e->data + e->size - FOOTER_SIZE;
  if (memcmp(footer, kMagic, sizeof(kMagic)) != 0) return "bad magic";
  if (load_le32(footer + FOOTER_VERSION_AT) != FORMAT_VERSION) {
    return "unknown format version";
  }
  uint64_t body = e->size - FOOTER_SIZE;
  uint64_t so_size = load_le64(footer + FOOTER_SO_SIZE_AT);
  uint64_t meta_size = load_le64(footer + FOOTER_META_SIZE_AT);
  if (so_size == 0 || so_size > body || meta_size != body - so_size) {
    return "sizes do not match the file";
  }
  uint8_t digest[DC_SHA256_DIGEST_SIZE];
  dc__sha256(e->data, (size_t)body, digest);
  if (memcmp(digest, footer + FOOTER_DIGEST_AT, sizeof(digest)) != 0) {
    return "checksum mismatch";
  }
  *out_so_size = (size_t)so_size;
  *out_meta_size = (size_t)meta_size;
  return NULL;
}

// Deletes the corrupt entry |e| read from |path|, unless a writer has
// renamed a new entry over it since: only the file that was read goes.
static dc_status_t discard_corrupt(dc__kcache_t* cache, const char* path,
                                   const entry_t* e, const char* reason) {
  count(&cache->corrupt);
  struct stat st;
  if (lstat(path, &st) == 0 && st.st_dev == e->dev && st.st_ino == e->ino) {
    unlink(path);
  }
  kc_log(cache, DC_LOG_INFO, "kernel cache: deleted corrupt entry '%s' (%s)",
         path, reason);
  return DC_FAIL(DC_ERR_NOT_FOUND, "kernel cache: entry '%s' was corrupt "
                 "(%s)", path, reason);
}

// Copies the metadata of the verified entry |e| out to the caller.
static dc_status_t copy_meta(dc__kcache_t* cache, const entry_t* e,
                             size_t so_size, size_t meta_size,
                             void** out_meta, size_t* out_meta_size) {
  if (meta_size == 0) return DC_OK;
  void* meta = dc_allocator_malloc(cache->allocator, meta_size);
  if (meta == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "kernel cache: cannot allocate %zu bytes of metadata",
                   meta_size);
  }
  memcpy(meta, e->data + so_size, meta_size);
  *out_meta = meta;
  *out_meta_size = meta_size;
  return DC_OK;
}

// Reads, verifies and hands out the entry at |entry|.
static dc_status_t lookup_entry(dc__kcache_t* cache, const char* entry,
                                void** out_meta, size_t* out_meta_size) {
  entry_t e = {0};
  const char* reason = NULL;
  dc_status_t status = read_entry(cache, entry, &e, &reason);
  size_t so_size = 0;
  size_t meta_size = 0;
  if (status == DC_OK) {
    reason = verify_entry(&e, &so_size, &meta_size);
    if (reason != NULL) status = DC_ERR_DATA_LOSS;
  }
  if (status == DC_OK) {
    status = copy_meta(cache, &e, so_size, meta_size, out_meta,
                       out_meta_size);
  } else if (status == DC_ERR_DATA_LOSS) {
    status = discard_corrupt(cache, entry, &e, reason);
  }
  dc_allocator_free(cache->allocator, e.data, e.size);
  return status;
}

dc_status_t dc__kcache_lookup(dc__kcache_t* cache, const uint8_t key[32],
                              char* path, size_t path_size, void** out_meta,
                              size_t* out_meta_size) {
  DC_REQUIRE_ARG(out_meta, "dc__kcache_lookup");
  DC_REQUIRE_ARG(out_meta_size, "dc__kcache_lookup");
  *out_meta = NULL;
  *out_meta_size = 0;
  DC_REQUIRE_ARG(path, "dc__kcache_lookup");
  if (path_size > 0) path[0] = '\0';
  DC_REQUIRE_ARG(cache, "dc__kcache_lookup");
  DC_REQUIRE_ARG(key, "dc__kcache_lookup");
  if (atomic_load_explicit(&cache->off, memory_order_relaxed)) {
    count(&cache->misses);
    return DC_FAIL(DC_ERR_NOT_FOUND, "kernel cache: the disk cache is off");
  }
  char hex[KEY_HEX_SIZE];
  char entry[DC_KCACHE_PATH_SIZE];
  entry_path(cache, key, hex, entry);
  if (strlen(entry) + 1 > path_size) {
    return give_path(entry, path, path_size, "dc__kcache_lookup");
  }
  dc_status_t status = lookup_entry(cache, entry, out_meta, out_meta_size);
  if (status != DC_OK) {
    count(&cache->misses);
    return status;
  }
  count(&cache->hits);
  return give_path(entry, path, path_size, "dc__kcache_lookup");
}

//===-- Store -----------------------------------------------------------===//

// Errors that mean the directory, not this one store, is the problem.
static bool is_dir_errno(int err) {
  return err == EACCES || err == EPERM || err == EROFS || err == ENOTDIR ||
         err == ENOENT;
}

// Creates a unique temporary file next to the entry (same filesystem, so
// the rename is atomic) and opens it; its name goes to |tmp|. The name
// carries our pid, for sweep_temporaries.
static dc_status_t open_temp(dc__kcache_t* cache, const char* hex, char* tmp,
                             int* out_fd) {
  for (int attempt = 0;; ++attempt) {
    snprintf(tmp, DC_KCACHE_PATH_SIZE, "%s/.%s" TEMP_MARK "%ld-" DC_MKTEMP_SUFFIX,
             cache->dir, hex, (long)getpid());
    int fd = mkostemp(tmp, O_CLOEXEC);  // no fd leaks into compilers
    if (fd >= 0) {
      *out_fd = fd;
      return DC_OK;
    }
    int err = errno;
    // Someone removed the directory since we made it: make it again, once.
    if (err == ENOENT && attempt == 0 && make_dirs(cache->dir) == 0) {
      continue;
    }
    if (is_dir_errno(err)) return dir_unusable(cache, "write to", err);
    return io_fail(err, "create a file in", cache->dir);
  }
}

static dc_status_t write_all(int fd, const void* data, size_t size,
                             const char* path) {
  const uint8_t* p = data;
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_fail(errno, "write", path);
    if (n == 0) return io_fail(ENOSPC, "write", path);
    p += n;
    size -= (size_t)n;
  }
  return DC_OK;
}

// Copies |so_size| bytes from |so_fd| to |fd|, adding them to |sha|.
static dc_status_t copy_object(int so_fd, const char* so_path,
                               uint64_t so_size, int fd, const char* tmp,
                               dc__sha256_t* sha) {
  uint8_t chunk[COPY_CHUNK];
  uint64_t copied = 0;
  for (;;) {
    ssize_t n = read(so_fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_fail(errno, "read", so_path);
    if (n == 0) break;
    dc__sha256_update(sha, chunk, (size_t)n);
    DC_RETURN_IF_ERROR(write_all(fd, chunk, (size_t)n, tmp));
    copied += (uint64_t)n;
  }
  if (copied != so_size) {
    return DC_FAIL(DC_ERR_UNAVAILABLE, "kernel cache: '%s' changed size "
                   "while being copied", so_path);
  }
  return DC_OK;
}

// Writes a whole entry (object, metadata, footer) into the open file |fd|.
static dc_status_t write_entry(int fd, const char* tmp, int so_fd,
                               const char* so_path, uint64_t so_size,
                               const void* meta, size_t meta_size) {
  dc__sha256_t sha;
  dc__sha256_init(&sha);
  DC_RETURN_IF_ERROR(copy_object(so_fd, so_path, so_size, fd, tmp, &sha));
  dc__sha256_update(&sha, meta, meta_size);
  if (meta_size > 0) DC_RETURN_IF_ERROR(write_all(fd, meta, meta_size, tmp));
  uint8_t footer[FOOTER_SIZE];
  memcpy(footer, kMagic, sizeof(kMagic));
  store_le32(footer + FOOTER_VERSION_AT, FORMAT_VERSION);
  store_le64(footer + FOOTER_SO_SIZE_AT, so_size);
  store_le64(footer + FOOTER_META_SIZE_AT, meta_size);
  dc__sha256_final(&sha, footer + FOOTER_DIGEST_AT);
  return write_all(fd, footer, sizeof(footer), tmp);
}

// Checks the size of the object open as |so_fd| into |*out_so_size|.
static dc_status_t object_size(int so_fd, const char* so_path,
                               size_t meta_size, uint64_t* out_so_size) {
  struct stat st;
  if (fstat(so_fd, &st) != 0) return io_fail(errno, "stat", so_path);
  if (!S_ISREG(st.st_mode) || st.st_size == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "dc__kcache_store: '%s' is not "
                   "a non-empty regular file", so_path);
  }
  uint64_t total = (uint64_t)st.st_size + FOOTER_SIZE;
  if (total > DC_KCACHE_MAX_ENTRY_SIZE ||
      meta_size > DC_KCACHE_MAX_ENTRY_SIZE - total) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE, "dc__kcache_store: an entry of "
                   "'%s' and %zu bytes of metadata exceeds the limit of "
                   "%llu bytes", so_path, meta_size,
                   (unsigned long long)DC_KCACHE_MAX_ENTRY_SIZE);
  }
  *out_so_size = (uint64_t)st.st_size;
  return DC_OK;
}

// Writes the entry for |hex| to a temporary file, then renames it to
// |entry|. On failure removes the temporary file.
static dc_status_t store_entry(dc__kcache_t* cache, const char* hex,
                               const char* entry, int so_fd,
                               const char* so_path, const void* meta,
                               size_t meta_size) {
  uint64_t so_size = 0;
  DC_RETURN_IF_ERROR(object_size(so_fd, so_path, meta_size, &so_size));
  DC_RETURN_IF_ERROR(ensure_dir(cache));
  char tmp[DC_KCACHE_PATH_SIZE];
  int fd = -1;
  DC_RETURN_IF_ERROR(open_temp(cache, hex, tmp, &fd));
  dc_status_t status =
      write_entry(fd, tmp, so_fd, so_path, so_size, meta, meta_size);
  // close() can be the first to report a full disk (NFS, quotas).
  if (close(fd) != 0 && status == DC_OK) status = io_fail(errno, "write", tmp);
  if (status == DC_OK && rename(tmp, entry) != 0) {
    status = io_fail(errno, "rename a new entry to", entry);
  }
  if (status != DC_OK) unlink(tmp);
  return status;
}

dc_status_t dc__kcache_store(dc__kcache_t* cache, const uint8_t key[32],
                             const char* so_path, const void* meta,
                             size_t meta_size, char* path, size_t path_size) {
  DC_REQUIRE_ARG(path, "dc__kcache_store");
  if (path_size > 0) path[0] = '\0';
  DC_REQUIRE_ARG(cache, "dc__kcache_store");
  DC_REQUIRE_ARG(key, "dc__kcache_store");
  DC_REQUIRE_ARG(so_path, "dc__kcache_store");
  if (meta == NULL && meta_size > 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc__kcache_store: 'meta' is NULL but meta_size is %zu",
                   meta_size);
  }
  if (so_path[0] == '\0') {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "dc__kcache_store: empty "
                   "'so_path'");
  }
  if (atomic_load_explicit(&cache->off, memory_order_relaxed)) {
    return give_path(so_path, path, path_size, "dc__kcache_store");
  }
  char hex[KEY_HEX_SIZE];
  char entry[DC_KCACHE_PATH_SIZE];
  entry_path(cache, key, hex, entry);
  if (strlen(entry) + 1 > path_size) {
    return give_path(entry, path, path_size, "dc__kcache_store");
  }
  int so_fd = open(so_path, O_RDONLY | O_CLOEXEC);
  dc_status_t status =
      so_fd < 0 ? io_fail(errno, "open", so_path)
                : store_entry(cache, hex, entry, so_fd, so_path, meta,
                              meta_size);
  if (so_fd >= 0) close(so_fd);
  if (status != DC_OK) {
    count(&cache->errors);
    return status;
  }
  count(&cache->stores);
  return give_path(entry, path, path_size, "dc__kcache_store");
}
