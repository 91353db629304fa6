// check_kcache.c: the on-disk kernel cache (entries, corruption, concurrent
// writers, directories) and its SHA-256.
// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"
#include "kernel/kcache.h"
#include "kernel/sha256.h"

#define FOOTER 56  // the entry footer's size, as kcache.h documents it

//===-- Fixture: a temporary directory and a cache in it ----------------===//

static char tmp_dir[64];
static char cache_dir[128];
static dc__kcache_t* cache;

// What the cache logged. Thread-safe, as the callback must be.
typedef struct test_log_t {
  pthread_mutex_t lock;
  int count;
  int warnings;
  char last[512];
} test_log_t;

static test_log_t logged = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void log_fn(void* user_data, dc_log_level_t level,
                   const char* message) {
  test_log_t* log = user_data;
  pthread_mutex_lock(&log->lock);
  log->count++;
  if (level == DC_LOG_WARN) log->warnings++;
  snprintf(log->last, sizeof(log->last), "%s", message);
  pthread_mutex_unlock(&log->lock);
}

static void log_reset(void) {
  pthread_mutex_lock(&logged.lock);
  logged.count = 0;
  logged.warnings = 0;
  logged.last[0] = '\0';
  pthread_mutex_unlock(&logged.lock);
}

static dc__kcache_t* cache_new(const char* dir) {
  dc__kcache_t* c = NULL;
  DC_CK_OK(dc__kcache_create(dc_allocator_system(), dir, log_fn, &logged,
                             &c));
  ck_assert_ptr_nonnull(c);
  return c;
}



static void setup(void) {
  unsetenv("DC_CACHE_DIR");
  log_reset();
  dc_test_make_temp_dir(tmp_dir, sizeof(tmp_dir), "dc-kcache");
  snprintf(cache_dir, sizeof(cache_dir), "%s/cache", tmp_dir);
  cache = cache_new(cache_dir);
}

static void teardown(void) {
  dc__kcache_destroy(cache);
  cache = NULL;
  dc_test_remove_tree(tmp_dir);
}

//===-- Helpers ---------------------------------------------------------===//

// The key of test entry number |id|.
static void key_of(uint32_t id, uint8_t key[32]) {
  char text[64];
  int n = snprintf(text, sizeof(text), "dclua kcache test key %u", id);
  dc__sha256(text, (size_t)n, key);
}

// Fills |size| bytes with a sequence that depends only on |seed|.
static void fill(uint8_t* data, size_t size, uint64_t seed) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < size; ++i) {
    if (i % 8 == 0) dc_test_rand(&state);
    data[i] = (uint8_t)(state >> (8 * (i % 8)));
  }
}

static void write_file(const char* path, const void* data, size_t size) {
  FILE* f = fopen(path, "wb");
  ck_assert_msg(f != NULL, "cannot write %s", path);
  ck_assert_uint_eq(fwrite(data, 1, size, f), size);
  ck_assert_int_eq(fclose(f), 0);
}

// Reads the whole file at |path| into a malloc'd buffer; NULL if absent.
static uint8_t* read_file(const char* path, size_t* out_size) {
  *out_size = 0;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* data = malloc((size_t)size + 1);
  size_t got = fread(data, 1, (size_t)size, f);
  fclose(f);
  *out_size = got;
  return data;
}

// Writes a fake shared object of |size| bytes made from |seed| at
// |tmp_dir|/|name| and returns its path (static storage).
static const char* fake_so(const char* name, size_t size, uint64_t seed) {
  static char path[256];
  snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
  uint8_t* data = malloc(size);
  fill(data, size, seed);
  write_file(path, data, size);
  free(data);
  return path;
}

static bool file_exists(const char* path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

static off_t file_size(const char* path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_size;
}

// Counts the entries of |dir| (names ending in ".so", not hidden) and the
// other files in it.
static void count_files(const char* dir, int* out_entries, int* out_other) {
  *out_entries = 0;
  *out_other = 0;
  DIR* d = opendir(dir);
  if (d == NULL) return;
  for (struct dirent* e = readdir(d); e != NULL; e = readdir(d)) {
    const char* name = e->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    size_t n = strlen(name);
    bool entry = n > 3 && name[0] != '.' && strcmp(name + n - 3, ".so") == 0;
    ++*(entry ? out_entries : out_other);
  }
  closedir(d);
}

static dc__kcache_stats_t stats_of(const dc__kcache_t* c) {
  dc__kcache_stats_t s;
  memset(&s, 0xAB, sizeof(s));  // so a missed field shows
  dc__kcache_stats(c, &s);
  return s;
}

// Looks up |key| and asserts a hit whose metadata is |meta|.
static void expect_hit(dc__kcache_t* c, const uint8_t key[32],
                       const void* meta, size_t meta_size, char* path) {
  void* got = NULL;
  size_t got_size = 0;
  DC_CK_OK(dc__kcache_lookup(c, key, path, DC_KCACHE_PATH_SIZE, &got,
                             &got_size));
  ck_assert_uint_eq(got_size, meta_size);
  if (meta_size > 0) ck_assert_mem_eq(got, meta, meta_size);
  dc_allocator_free(dc_allocator_system(), got, got_size);
}

static void expect_miss(dc__kcache_t* c, const uint8_t key[32]) {
  char path[DC_KCACHE_PATH_SIZE] = "x";
  void* meta = (void*)1;
  size_t meta_size = 1;
  DC_CK_FAIL(dc__kcache_lookup(c, key, path, sizeof(path), &meta,
                               &meta_size),
             DC_ERR_NOT_FOUND, "kernel cache");
  ck_assert_ptr_null(meta);
  ck_assert_uint_eq(meta_size, 0);
  ck_assert_str_eq(path, "");
}

// Stores a fake object of |so_size| bytes with |meta| under |key|.
static void store_fake(const uint8_t key[32], size_t so_size, uint64_t seed,
                       const char* meta, char* path) {
  const char* so = fake_so("fake.so", so_size, seed);
  DC_CK_OK(dc__kcache_store(cache, key, so, meta, strlen(meta), path,
                            DC_KCACHE_PATH_SIZE));
}

//===-- Building a real shared object -----------------------------------===//

// Compiles a shared object exporting `int dc_kcache_probe(int)` returning
// x * |factor| + 1 into |tmp_dir|/|name|. Returns false, after saying why,
// if there is no C compiler.
static bool build_probe(const char* name, int factor, char* out,
                        size_t size) {
  if (system("command -v cc >/dev/null 2>&1") != 0) {
    fprintf(stderr, "check_kcache: no 'cc' on PATH; skipping the dlopen "
            "part of this test\n");
    return false;
  }
  char src[256];
  snprintf(src, sizeof(src), "%s/%s.c", tmp_dir, name);
  char code[256];
  snprintf(code, sizeof(code),
           "int dc_kcache_probe(int x);\n"
           "int dc_kcache_probe(int x) { return x * %d + 1; }\n", factor);
  write_file(src, code, strlen(code));
  snprintf(out, size, "%s/%s", tmp_dir, name);
  char cmd[700];
  snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -o '%s' '%s'", out, src);
  ck_assert_msg(system(cmd) == 0, "'%s' failed", cmd);
  return true;
}

// dlopens |path| and calls its probe with |x|.
static int call_probe(const char* path, int x, void** out_handle) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(handle != NULL, "dlopen(%s): %s", path, dlerror());
  int (*probe)(int) = (int (*)(int))dlsym(handle, "dc_kcache_probe");
  ck_assert_msg(probe != NULL, "dlsym: %s", dlerror());
  *out_handle = handle;
  return probe(x);
}

//===-- core: SHA-256 ---------------------------------------------------===//

static void expect_digest(const uint8_t digest[32], const char* hex) {
  char got[65];
  dc__sha256_hex(digest, 32, got);
  ck_assert_str_eq(got, hex);
}

START_TEST(test_kcache_sha256_vectors) {
  uint8_t digest[32];
  dc__sha256("abc", 3, digest);
  expect_digest(digest, "ba7816bf8f01cfea414140de5dae2223"
                        "b00361a396177a9cb410ff61f20015ad");
  const char* two_blocks =
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  dc__sha256(two_blocks, strlen(two_blocks), digest);
  expect_digest(digest, "248d6a61d20638b8e5c026930c3e6039"
                        "a33ce45964ff2167f6ecedd419db06c1");
  dc__sha256(NULL, 0, digest);
  expect_digest(digest, "e3b0c44298fc1c149afbf4c8996fb924"
                        "27ae41e4649b934ca495991b7852b855");
}
END_TEST

START_TEST(test_kcache_sha256_million_a_streamed) {
  // Fed in uneven pieces, so the block buffering is exercised too.
  char a[1000];
  memset(a, 'a', sizeof(a));
  dc__sha256_t ctx;
  dc__sha256_init(&ctx);
  size_t left = 1000000;
  for (size_t piece = 1; left > 0; piece = piece % 997 + 1) {
    size_t n = DC_MIN(piece, left);
    dc__sha256_update(&ctx, a, n);
    left -= n;
  }
  uint8_t digest[32];
  dc__sha256_final(&ctx, digest);
  expect_digest(digest, "cdc76e5c9914fb9281a1c7e284d73e67"
                        "f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(test_kcache_sha256_split_matches_one_shot) {
  // Every length around the padding boundaries (55, 56, 63, 64 ...), split
  // at every point, hashes the same as in one call.
  uint8_t data[140];
  fill(data, sizeof(data), 7);
  for (size_t len = 0; len <= sizeof(data); ++len) {
    uint8_t want[32];
    dc__sha256(data, len, want);
    for (size_t cut = 0; cut <= len; ++cut) {
      dc__sha256_t ctx;
      dc__sha256_init(&ctx);
      dc__sha256_update(&ctx, data, cut);
      dc__sha256_update(&ctx, data + cut, len - cut);
      uint8_t got[32];
      dc__sha256_final(&ctx, got);
      ck_assert_msg(memcmp(got, want, 32) == 0, "len %zu cut %zu", len, cut);
    }
  }
}
END_TEST

//===-- core: lookups and stores ----------------------------------------===//

START_TEST(test_kcache_miss_store_hit) {
  uint8_t key[32];
  key_of(1, key);
  expect_miss(cache, key);
  ck_assert(!file_exists(cache_dir));  // a lookup creates nothing

  char stored[DC_KCACHE_PATH_SIZE];
  store_fake(key, 3000, 1, "meta: vector_add f32", stored);
  char hex[65];
  dc__sha256_hex(key, 32, hex);
  char want[DC_KCACHE_PATH_SIZE];
  snprintf(want, sizeof(want), "%s/%s.so", cache_dir, hex);
  ck_assert_str_eq(stored, want);
  ck_assert_int_eq(file_size(stored), 3000 + 20 + FOOTER);

  // The object sits unchanged at offset 0 of the entry.
  size_t size = 0;
  uint8_t* entry = read_file(stored, &size);
  uint8_t so[3000];
  fill(so, sizeof(so), 1);
  ck_assert_mem_eq(entry, so, sizeof(so));
  ck_assert_mem_eq(entry + 3000, "meta: vector_add f32", 20);
  ck_assert_mem_eq(entry + size - FOOTER, "DCKC", 4);
  free(entry);

  char path[DC_KCACHE_PATH_SIZE];
  expect_hit(cache, key, "meta: vector_add f32", 20, path);
  ck_assert_str_eq(path, stored);
  dc__kcache_stats_t s = stats_of(cache);
  ck_assert_uint_eq(s.hits, 1);
  ck_assert_uint_eq(s.misses, 1);
  ck_assert_uint_eq(s.stores, 1);
  ck_assert_uint_eq(s.corrupt, 0);
  ck_assert_uint_eq(s.errors, 0);
}
END_TEST

START_TEST(test_kcache_entry_dlopens_with_trailing_bytes) {
  char so[256];
  if (!build_probe("probe.so", 3, so, sizeof(so))) return;
  uint8_t key[32];
  key_of(2, key);
  // Large metadata, so plenty of bytes trail the ELF image.
  size_t meta_size = 64 << 10;
  uint8_t* meta = malloc(meta_size);
  fill(meta, meta_size, 2);
  char path[DC_KCACHE_PATH_SIZE];
  DC_CK_OK(dc__kcache_store(cache, key, so, meta, meta_size, path,
                            sizeof(path)));
  unlink(so);  // the entry stands on its own
  expect_hit(cache, key, meta, meta_size, path);
  void* handle = NULL;
  ck_assert_int_eq(call_probe(path, 7, &handle), 22);
  free(meta);

  // Replacing the entry does not disturb the object already mapped.
  char other[256];
  ck_assert(build_probe("probe2.so", 5, other, sizeof(other)));
  DC_CK_OK(dc__kcache_store(cache, key, other, "new", 3, path,
                            sizeof(path)));
  int (*probe)(int) = (int (*)(int))dlsym(handle, "dc_kcache_probe");
  ck_assert_int_eq(probe(7), 22);
  dlclose(handle);
  expect_hit(cache, key, "new", 3, path);
  ck_assert_int_eq(call_probe(path, 7, &handle), 36);
  dlclose(handle);
}
END_TEST

START_TEST(test_kcache_store_replaces_entry) {
  uint8_t key[32];
  key_of(3, key);
  char path[DC_KCACHE_PATH_SIZE];
  store_fake(key, 500, 1, "first", path);
  store_fake(key, 900, 2, "second, longer", path);
  expect_hit(cache, key, "second, longer", 14, path);
  ck_assert_int_eq(file_size(path), 900 + 14 + FOOTER);
  ck_assert_uint_eq(stats_of(cache).stores, 2);
}
END_TEST

START_TEST(test_kcache_empty_metadata) {
  uint8_t key[32];
  key_of(4, key);
  char path[DC_KCACHE_PATH_SIZE];
  const char* so = fake_so("fake.so", 100, 4);
  DC_CK_OK(dc__kcache_store(cache, key, so, NULL, 0, path, sizeof(path)));
  void* meta = (void*)1;
  size_t meta_size = 1;
  DC_CK_OK(dc__kcache_lookup(cache, key, path, sizeof(path), &meta,
                             &meta_size));
  ck_assert_ptr_null(meta);
  ck_assert_uint_eq(meta_size, 0);
}
END_TEST

START_TEST(test_kcache_keys_are_independent) {
  char path[DC_KCACHE_PATH_SIZE];
  for (uint32_t id = 10; id < 20; ++id) {
    uint8_t key[32];
    key_of(id, key);
    char meta[32];
    snprintf(meta, sizeof(meta), "meta %u", id);
    store_fake(key, 200 + id, id, meta, path);
  }
  for (uint32_t id = 10; id < 20; ++id) {
    uint8_t key[32];
    key_of(id, key);
    char meta[32];
    snprintf(meta, sizeof(meta), "meta %u", id);
    expect_hit(cache, key, meta, strlen(meta), path);
  }
  int entries = 0;
  int other = 0;
  count_files(cache_dir, &entries, &other);
  ck_assert_int_eq(entries, 10);
  ck_assert_int_eq(other, 0);  // no temporary file left behind
}
END_TEST

//===-- core: concurrent writers and readers ----------------------------===//
//
// Processes and threads store and look up a few shared keys and some keys
// of their own, all at once. Every entry is self-describing: its metadata
// names the key, the writer and the seed its object and payload were made
// from, so a reader can check the whole entry file without trusting the
// cache's checksum. A torn or mixed entry would fail that check.

#define SHARED_KEYS 3
#define WRITER_PROCS 3
#define THREADS 5  // of which READERS only look up
#define READERS 2
#define OPS 400

typedef struct entry_meta_t {
  uint32_t magic;
  uint32_t key_id;
  uint64_t seed;
  uint32_t so_size;
  uint32_t payload_size;
} entry_meta_t;

#define META_MAGIC 0x4D455441u

typedef struct worker_t {
  dc__kcache_t* cache;
  unsigned id;
  bool writes;
  uint64_t rng;
  char so_path[128];
  size_t hits;
  size_t stores;
  size_t bad;
  char problem[256];
} worker_t;

static void worker_fail(worker_t* w, const char* what, uint32_t key_id) {
  if (w->bad++ == 0) {
    snprintf(w->problem, sizeof(w->problem), "worker %u, key %u: %s", w->id,
             key_id, what);
  }
}

// Checks metadata |meta| of |size| bytes against |key_id|; returns the
// header through |out| if it is intact.
static bool meta_ok(const uint8_t* meta, size_t size, uint32_t key_id,
                    entry_meta_t* out) {
  if (size < sizeof(*out)) return false;
  memcpy(out, meta, sizeof(*out));
  if (out->magic != META_MAGIC || out->key_id != key_id ||
      size != sizeof(*out) + out->payload_size) {
    return false;
  }
  uint8_t* want = malloc(out->payload_size + 1);
  fill(want, out->payload_size, out->seed ^ 0xFF);
  bool same = memcmp(meta + sizeof(*out), want, out->payload_size) == 0;
  free(want);
  return same;
}

// Reads the entry file at |path| and checks every byte of it against what
// its own metadata says, without using the cache.
static bool entry_file_ok(const char* path, uint32_t key_id) {
  size_t size = 0;
  uint8_t* data = read_file(path, &size);
  bool ok = data != NULL && size >= FOOTER &&
            memcmp(data + size - FOOTER, "DCKC", 4) == 0;
  uint64_t so_size = 0;
  uint64_t meta_size = 0;
  if (ok) {
    memcpy(&so_size, data + size - FOOTER + 8, 8);  // little-endian host
    memcpy(&meta_size, data + size - FOOTER + 16, 8);
    ok = so_size + meta_size + FOOTER == size;
  }
  entry_meta_t head;
  ok = ok && meta_ok(data + so_size, meta_size, key_id, &head) &&
       head.so_size == so_size;
  if (ok) {
    uint8_t* want = malloc(so_size);
    fill(want, so_size, head.seed);
    ok = memcmp(data, want, so_size) == 0;
    free(want);
  }
  free(data);
  return ok;
}

static uint32_t pick_key(worker_t* w, uint64_t r) {
  if (r & 1) return (uint32_t)(r >> 8) % SHARED_KEYS;
  return 1000 + w->id * 8 + (uint32_t)(r >> 8) % 4;  // this worker's own
}

static void worker_store(worker_t* w, uint32_t key_id, uint64_t r) {
  entry_meta_t head = {META_MAGIC, key_id, r, 1000 + (uint32_t)(r % 30000),
                       (uint32_t)((r >> 20) % 4000)};
  uint8_t* so = malloc(head.so_size);
  fill(so, head.so_size, head.seed);
  FILE* f = fopen(w->so_path, "wb");
  bool written = f != NULL && fwrite(so, 1, head.so_size, f) == head.so_size;
  if (f != NULL && fclose(f) != 0) written = false;
  free(so);
  size_t meta_size = sizeof(head) + head.payload_size;
  uint8_t* meta = malloc(meta_size);
  memcpy(meta, &head, sizeof(head));
  fill(meta + sizeof(head), head.payload_size, head.seed ^ 0xFF);
  uint8_t key[32];
  key_of(key_id, key);
  char path[DC_KCACHE_PATH_SIZE];
  if (!written) {
    worker_fail(w, "cannot write the object", key_id);
  } else if (dc__kcache_store(w->cache, key, w->so_path, meta, meta_size,
                              path, sizeof(path)) != DC_OK) {
    worker_fail(w, dc_last_error(), key_id);
  } else {
    w->stores++;
  }
  free(meta);
}

static void worker_lookup(worker_t* w, uint32_t key_id) {
  uint8_t key[32];
  key_of(key_id, key);
  char path[DC_KCACHE_PATH_SIZE];
  void* meta = NULL;
  size_t meta_size = 0;
  dc_status_t st = dc__kcache_lookup(w->cache, key, path, sizeof(path),
                                     &meta, &meta_size);
  if (st == DC_ERR_NOT_FOUND) return;
  entry_meta_t head;
  if (st != DC_OK) {
    worker_fail(w, dc_last_error(), key_id);
  } else if (!meta_ok(meta, meta_size, key_id, &head)) {
    worker_fail(w, "torn metadata", key_id);
  } else if (!entry_file_ok(path, key_id)) {
    worker_fail(w, "the returned path is not an intact entry", key_id);
  } else {
    w->hits++;
  }
  dc_allocator_free(dc_allocator_system(), meta, meta_size);
}

static void worker_run(worker_t* w) {
  for (int i = 0; i < OPS; ++i) {
    uint64_t r = dc_test_rand(&w->rng);
    uint32_t key_id = pick_key(w, r);
    if (w->writes && (r >> 4) % 3 == 0) {
      worker_store(w, key_id, r);
    } else {
      worker_lookup(w, key_id);
    }
  }
}

static void* worker_thread(void* arg) {
  worker_run(arg);
  return NULL;
}

static void worker_init(worker_t* w, dc__kcache_t* c, unsigned id,
                        bool writes) {
  memset(w, 0, sizeof(*w));
  w->cache = c;
  w->id = id;
  w->writes = writes;
  w->rng = 0x1234567ull + id * 7919u;
  snprintf(w->so_path, sizeof(w->so_path), "%s/so-%u", tmp_dir, id);
}

// A writer process: its own cache on the same directory. Exits 0 if all
// went well.
static void writer_process(unsigned id) {
  dc__kcache_t* c = NULL;
  if (dc__kcache_create(dc_allocator_system(), cache_dir, NULL, NULL, &c) !=
      DC_OK) {
    _exit(2);
  }
  worker_t w;
  worker_init(&w, c, id, /*writes=*/true);
  worker_run(&w);
  dc__kcache_stats_t s;
  dc__kcache_stats(c, &s);
  dc__kcache_destroy(c);
  if (w.bad > 0 || s.corrupt > 0 || s.errors > 0) {
    fprintf(stderr, "writer process %u: %zu problems (%s), corrupt %llu, "
            "errors %llu\n", id, w.bad, w.problem,
            (unsigned long long)s.corrupt, (unsigned long long)s.errors);
    _exit(1);
  }
  _exit(0);
}

START_TEST(test_kcache_concurrent_writers_never_tear) {
  // Fork first, while this process has a single thread.
  pid_t pids[WRITER_PROCS];
  for (unsigned i = 0; i < WRITER_PROCS; ++i) {
    pids[i] = fork();
    ck_assert_int_ge(pids[i], 0);
    if (pids[i] == 0) writer_process(100 + i);
  }
  worker_t workers[THREADS];
  for (unsigned i = 0; i < THREADS; ++i) {
    worker_init(&workers[i], cache, i, /*writes=*/i >= READERS);
  }
  dc_test_run_threads(THREADS, worker_thread, workers, sizeof(worker_t));
  for (unsigned i = 0; i < WRITER_PROCS; ++i) {
    int status = 0;
    ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "writer process %u failed (status %d)", i, status);
  }
  size_t hits = 0;
  for (unsigned i = 0; i < THREADS; ++i) {
    ck_assert_msg(workers[i].bad == 0, "%zu problems, first: %s",
                  workers[i].bad, workers[i].problem);
    hits += workers[i].hits;
  }
  ck_assert_uint_gt(hits, 0);
  dc__kcache_stats_t s = stats_of(cache);
  ck_assert_uint_eq(s.corrupt, 0);
  ck_assert_uint_eq(s.errors, 0);
  ck_assert_uint_eq(s.hits, hits);
  int entries = 0;
  int other = 0;
  count_files(cache_dir, &entries, &other);
  ck_assert_int_eq(other, 0);  // every temporary file was renamed
  ck_assert_int_le(entries, SHARED_KEYS + (THREADS + WRITER_PROCS) * 4);
}
END_TEST

//===-- errors: corrupt entries -----------------------------------------===//

typedef enum corruption_e {
  FLIP_OBJECT_BYTE,
  FLIP_META_BYTE,
  FLIP_CHECKSUM_BYTE,
  TRUNCATE_ONE,
  TRUNCATE_TO_TEN,
  EMPTY_FILE,
  GARBAGE_FILE,
  WRONG_MAGIC,
  WRONG_VERSION,
  WRONG_SO_SIZE,
  APPENDED_BYTE,
  CORRUPTION_COUNT,
} corruption_t;

static const char* const kCorruptionNames[CORRUPTION_COUNT] = {
    "flip object byte", "flip meta byte", "flip checksum byte",
    "truncate one",     "truncate to 10", "empty file",
    "garbage file",     "wrong magic",    "wrong version",
    "wrong so_size",    "appended byte",
};

// Damages the entry file at |path| (of an object of 4000 bytes and 100
// bytes of metadata) in the way |kind| names.
static void corrupt_entry(const char* path, corruption_t kind) {
  size_t size = 0;
  uint8_t* data = read_file(path, &size);
  ck_assert_uint_eq(size, 4000 + 100 + FOOTER);
  uint8_t* footer = data + size - FOOTER;
  switch (kind) {
    case FLIP_OBJECT_BYTE: data[2000] ^= 0x01; break;
    case FLIP_META_BYTE: data[4050] ^= 0x80; break;
    case FLIP_CHECKSUM_BYTE: footer[40] ^= 0x10; break;
    case TRUNCATE_ONE: size -= 1; break;
    case TRUNCATE_TO_TEN: size = 10; break;
    case EMPTY_FILE: size = 0; break;
    case GARBAGE_FILE: fill(data, size = 1000, 99); break;
    case WRONG_MAGIC: footer[0] = 'X'; break;
    case WRONG_VERSION: footer[4] = 2; break;
    case WRONG_SO_SIZE: footer[8] ^= 0x04; break;
    case APPENDED_BYTE: data[size++] = 0; break;  // read_file left room
    case CORRUPTION_COUNT: break;
  }
  write_file(path, data, size);
  free(data);
}

START_TEST(test_kcache_corrupt_entry_is_deleted) {
  corruption_t kind = (corruption_t)_i;
  uint8_t key[32];
  key_of(5, key);
  char meta[101];
  memset(meta, 'm', 100);
  meta[100] = '\0';
  char path[DC_KCACHE_PATH_SIZE];
  store_fake(key, 4000, 5, meta, path);
  corrupt_entry(path, kind);
  expect_miss(cache, key);
  DC_CK_ERROR_HAS("corrupt");
  ck_assert_msg(!file_exists(path), "%s: entry not deleted",
                kCorruptionNames[kind]);
  dc__kcache_stats_t s = stats_of(cache);
  ck_assert_uint_eq(s.corrupt, 1);
  ck_assert_uint_eq(s.misses, 1);
  ck_assert_uint_eq(s.hits, 0);
  DC_CK_STR_HAS(logged.last, "corrupt");
  // A fresh store works and hits.
  store_fake(key, 4000, 5, meta, path);
  expect_hit(cache, key, meta, 100, path);
}
END_TEST

START_TEST(test_kcache_entry_that_is_a_directory_is_an_error) {
  uint8_t key[32];
  key_of(6, key);
  char hex[65];
  dc__sha256_hex(key, 32, hex);
  char path[DC_KCACHE_PATH_SIZE];
  snprintf(path, sizeof(path), "%s/%s.so", cache_dir, hex);
  ck_assert_int_eq(mkdir(cache_dir, 0700), 0);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  expect_miss(cache, key);
  ck_assert(file_exists(path));  // not ours to delete
  dc__kcache_stats_t s = stats_of(cache);
  ck_assert_uint_eq(s.errors, 1);
  ck_assert_uint_eq(s.corrupt, 0);
  ck_assert_int_eq(logged.warnings, 1);
}
END_TEST

START_TEST(test_kcache_store_missing_object_fails_cleanly) {
  uint8_t key[32];
  key_of(7, key);
  char path[DC_KCACHE_PATH_SIZE] = "x";
  char missing[256];
  snprintf(missing, sizeof(missing), "%s/no-such.so", tmp_dir);
  DC_CK_FAIL(dc__kcache_store(cache, key, missing, "m", 1, path,
                              sizeof(path)),
             DC_ERR_NOT_FOUND, "no-such.so");
  ck_assert_str_eq(path, "");
  // An empty object is refused, and leaves no temporary file behind.
  const char* empty = fake_so("empty.so", 0, 0);
  DC_CK_FAIL(dc__kcache_store(cache, key, empty, "m", 1, path, sizeof(path)),
             DC_ERR_INVALID_ARGUMENT, "empty.so");
  int entries = 0;
  int other = 0;
  count_files(cache_dir, &entries, &other);
  ck_assert_int_eq(entries + other, 0);
  ck_assert_uint_eq(stats_of(cache).errors, 2);
  expect_miss(cache, key);
}
END_TEST

START_TEST(test_kcache_invalid_arguments) {
  uint8_t key[32];
  key_of(8, key);
  char path[DC_KCACHE_PATH_SIZE];
  void* meta = NULL;
  size_t meta_size = 0;
  const char* so = fake_so("fake.so", 10, 8);
  DC_CK_FAIL(dc__kcache_lookup(NULL, key, path, sizeof(path), &meta,
                               &meta_size),
             DC_ERR_INVALID_ARGUMENT, "cache");
  DC_CK_FAIL(dc__kcache_lookup(cache, NULL, path, sizeof(path), &meta,
                               &meta_size),
             DC_ERR_INVALID_ARGUMENT, "key");
  DC_CK_FAIL(dc__kcache_lookup(cache, key, NULL, 0, &meta, &meta_size),
             DC_ERR_INVALID_ARGUMENT, "path");
  DC_CK_FAIL(dc__kcache_store(cache, key, NULL, NULL, 0, path, sizeof(path)),
             DC_ERR_INVALID_ARGUMENT, "so_path");
  DC_CK_FAIL(dc__kcache_store(cache, key, "", NULL, 0, path, sizeof(path)),
             DC_ERR_INVALID_ARGUMENT, "so_path");
  DC_CK_FAIL(dc__kcache_store(cache, key, so, NULL, 5, path, sizeof(path)),
             DC_ERR_INVALID_ARGUMENT, "meta");
  DC_CK_FAIL(dc__kcache_create(dc_allocator_system(), NULL, NULL, NULL,
                               NULL),
             DC_ERR_INVALID_ARGUMENT, "out_cache");
}
END_TEST

//===-- errors: unusable directories ------------------------------------===//

START_TEST(test_kcache_dir_under_a_file_is_off) {
  // Root ignores permission bits, so a path below a regular file stands in
  // for an unwritable directory: it can never be created.
  char file[128];
  snprintf(file, sizeof(file), "%s/file", tmp_dir);
  write_file(file, "x", 1);
  char dir[160];
  snprintf(dir, sizeof(dir), "%s/sub", file);
  log_reset();
  dc__kcache_t* c = cache_new(dir);
  ck_assert_str_eq(dc__kcache_dir(c), "off");
  ck_assert_int_eq(logged.warnings, 1);
  DC_CK_STR_HAS(logged.last, "disk cache disabled");
  DC_CK_STR_HAS(logged.last, "/file/sub");
  uint8_t key[32];
  key_of(9, key);
  expect_miss(c, key);
  // Store is a no-op that succeeds and hands back the caller's object.
  const char* so = fake_so("fake.so", 10, 9);
  char path[DC_KCACHE_PATH_SIZE];
  DC_CK_OK(dc__kcache_store(c, key, so, "m", 1, path, sizeof(path)));
  ck_assert_str_eq(path, so);
  dc__kcache_stats_t s = stats_of(c);
  ck_assert_uint_eq(s.stores, 0);
  ck_assert_uint_eq(s.errors, 0);
  ck_assert_uint_eq(s.misses, 1);
  dc__kcache_destroy(c);
}
END_TEST

START_TEST(test_kcache_dir_failing_at_first_store_turns_off) {
  // The directory is fine when the cache is made; then a file takes the
  // place of one of its parents.
  char dir[160];
  snprintf(dir, sizeof(dir), "%s/a/b", tmp_dir);
  dc__kcache_t* c = cache_new(dir);
  ck_assert_str_eq(dc__kcache_dir(c), dir);
  char blocker[128];
  snprintf(blocker, sizeof(blocker), "%s/a", tmp_dir);
  write_file(blocker, "x", 1);
  uint8_t key[32];
  key_of(10, key);
  const char* so = fake_so("fake.so", 10, 10);
  char path[DC_KCACHE_PATH_SIZE] = "x";
  DC_CK_FAIL(dc__kcache_store(c, key, so, "m", 1, path, sizeof(path)),
             DC_ERR_FAILED_PRECONDITION, "disk cache disabled");
  DC_CK_ERROR_HAS("/a/b");
  ck_assert_str_eq(path, "");
  ck_assert_str_eq(dc__kcache_dir(c), "off");
  ck_assert_int_eq(logged.warnings, 1);
  ck_assert_uint_eq(stats_of(c).errors, 1);
  // From now on the cache is off: stores succeed without storing.
  DC_CK_OK(dc__kcache_store(c, key, so, "m", 1, path, sizeof(path)));
  ck_assert_str_eq(path, so);
  expect_miss(c, key);
  ck_assert_int_eq(logged.warnings, 1);  // said once
  dc__kcache_destroy(c);
}
END_TEST

//===-- lifecycle -------------------------------------------------------===//

START_TEST(test_kcache_off_mode) {
  static const char* const kOff[] = {"off", "OFF", "Off"};
  for (size_t i = 0; i < 3; ++i) {
    log_reset();
    dc__kcache_t* c = cache_new(kOff[i]);
    ck_assert_str_eq(dc__kcache_dir(c), "off");
    ck_assert_int_eq(logged.count, 0);  // asked for: nothing to warn about
    uint8_t key[32];
    key_of(11, key);
    expect_miss(c, key);
    const char* so = fake_so("fake.so", 10, 11);
    char path[DC_KCACHE_PATH_SIZE];
    DC_CK_OK(dc__kcache_store(c, key, so, "m", 1, path, sizeof(path)));
    ck_assert_str_eq(path, so);
    expect_miss(c, key);
    dc__kcache_stats_t s = stats_of(c);
    ck_assert_uint_eq(s.misses, 2);
    ck_assert_uint_eq(s.stores, 0);
    dc__kcache_destroy(c);
  }
  ck_assert(!file_exists("off"));
}
END_TEST

START_TEST(test_kcache_dir_created_on_first_store) {
  char dir[160];
  snprintf(dir, sizeof(dir), "%s/x/y/z", tmp_dir);
  dc__kcache_t* c = cache_new(dir);
  ck_assert(!file_exists(dir));
  uint8_t key[32];
  key_of(12, key);
  expect_miss(c, key);
  ck_assert(!file_exists(dir));
  const char* so = fake_so("fake.so", 10, 12);
  char path[DC_KCACHE_PATH_SIZE];
  DC_CK_OK(dc__kcache_store(c, key, so, "m", 1, path, sizeof(path)));
  struct stat st;
  ck_assert_int_eq(stat(dir, &st), 0);
  ck_assert(S_ISDIR(st.st_mode));
  ck_assert_uint_eq(st.st_mode & 0777, 0700);
  snprintf(dir, sizeof(dir), "%s/x", tmp_dir);
  ck_assert_int_eq(stat(dir, &st), 0);
  ck_assert_uint_eq(st.st_mode & 0777, 0700);
  dc__kcache_destroy(c);
}
END_TEST

START_TEST(test_kcache_dir_recreated_after_removal) {
  uint8_t key[32];
  key_of(13, key);
  char path[DC_KCACHE_PATH_SIZE];
  store_fake(key, 100, 13, "one", path);
  dc_test_remove_tree(cache_dir);  // someone clears the cache
  expect_miss(cache, key);
  store_fake(key, 100, 13, "two", path);
  expect_hit(cache, key, "two", 3, path);
  ck_assert_str_eq(dc__kcache_dir(cache), cache_dir);
}
END_TEST

START_TEST(test_kcache_destroy_null_is_a_no_op) {
  dc_set_error(DC_ERR_ABORTED, "keep me");
  dc__kcache_destroy(NULL);
  dc__kcache_destroy(cache);  // leaves the message alone too
  cache = NULL;
  ck_assert_str_eq(dc_last_error(), "keep me");
}
END_TEST

// Creates a cache with |dir| under the current environment and checks the
// directory it resolves to. Returns 0, or 1 after printing the mismatch.
static int resolves_to(const char* dir, const char* want) {
  dc__kcache_t* c = NULL;
  if (dc__kcache_create(dc_allocator_system(), dir, log_fn, &logged, &c) !=
      DC_OK) {
    fprintf(stderr, "create failed: %s\n", dc_last_error());
    return 1;
  }
  int bad = strcmp(dc__kcache_dir(c), want) != 0;
  if (bad) fprintf(stderr, "resolved '%s', want '%s'\n", dc__kcache_dir(c),
                   want);
  dc__kcache_destroy(c);
  return bad;
}

// Runs in a child process: the environment it changes dies with it.
static int check_env_resolution(void) {
  int bad = 0;
  unsetenv("DC_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  bad += resolves_to(NULL, "/home/u/.cache/dclua/kernels");
  setenv("XDG_CACHE_HOME", "relative/ignored", 1);
  bad += resolves_to("", "/home/u/.cache/dclua/kernels");
  setenv("XDG_CACHE_HOME", "/xdg/", 1);
  bad += resolves_to(NULL, "/xdg/dclua/kernels");
  setenv("DC_CACHE_DIR", "", 1);  // empty counts as unset
  bad += resolves_to(NULL, "/xdg/dclua/kernels");
  setenv("DC_CACHE_DIR", "/explicit//", 1);
  bad += resolves_to(NULL, "/explicit");
  bad += resolves_to("/given", "/given");  // the argument wins
  setenv("DC_CACHE_DIR", "off", 1);
  bad += resolves_to(NULL, "off");
  if (chdir(tmp_dir) != 0) return bad + 1;
  char want[256];
  snprintf(want, sizeof(want), "%s/rel/dir", tmp_dir);
  setenv("DC_CACHE_DIR", "rel/dir/", 1);
  bad += resolves_to(NULL, want);
  unsetenv("DC_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  log_reset();
  bad += resolves_to(NULL, "off");
  if (logged.warnings != 1 || strstr(logged.last, "HOME") == NULL) {
    fprintf(stderr, "no warning about the missing HOME: '%s'\n",
            logged.last);
    ++bad;
  }
  return bad;
}

START_TEST(test_kcache_default_dir_from_env) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(check_env_resolution() == 0 ? 0 : 1);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "resolution failed; see stderr");
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_kcache_path_buffer_sizes) {
  uint8_t key[32];
  key_of(14, key);
  char path[DC_KCACHE_PATH_SIZE];
  store_fake(key, 100, 14, "m", path);
  size_t need = strlen(path) + 1;
  char small[DC_KCACHE_PATH_SIZE];
  void* meta = NULL;
  size_t meta_size = 0;
  DC_CK_FAIL(dc__kcache_lookup(cache, key, small, need - 1, &meta,
                               &meta_size),
             DC_ERR_INVALID_ARGUMENT, "path buffer");
  ck_assert_str_eq(small, "");
  ck_assert_ptr_null(meta);
  DC_CK_OK(dc__kcache_lookup(cache, key, small, need, &meta, &meta_size));
  ck_assert_str_eq(small, path);
  dc_allocator_free(dc_allocator_system(), meta, meta_size);
  const char* so = fake_so("fake.so", 10, 14);
  DC_CK_FAIL(dc__kcache_store(cache, key, so, "m", 1, small, need - 1),
             DC_ERR_INVALID_ARGUMENT, "path buffer");
  DC_CK_FAIL(dc__kcache_store(cache, key, so, "m", 1, small, 0),
             DC_ERR_INVALID_ARGUMENT, "path buffer");
}
END_TEST

START_TEST(test_kcache_too_long_dir_is_off) {
  char* dir = malloc(5000);
  dir[0] = '/';
  memset(dir + 1, 'd', 4998);
  dir[4999] = '\0';
  log_reset();
  dc__kcache_t* c = cache_new(dir);
  ck_assert_str_eq(dc__kcache_dir(c), "off");
  DC_CK_STR_HAS(logged.last, "too long");
  dc__kcache_destroy(c);
  // The longest accepted directory (in components the kernel accepts)
  // still fits the documented path buffer.
  memset(dir, 'd', DC_KCACHE_DIR_MAX);
  for (size_t i = 0; i < DC_KCACHE_DIR_MAX; i += 200) dir[i] = '/';
  dir[DC_KCACHE_DIR_MAX] = '\0';
  c = cache_new(dir);
  ck_assert_str_eq(dc__kcache_dir(c), dir);
  uint8_t key[32];
  key_of(15, key);
  char path[DC_KCACHE_PATH_SIZE];
  void* meta = NULL;
  size_t meta_size = 0;
  DC_CK_FAIL(dc__kcache_lookup(c, key, path, sizeof(path), &meta,
                               &meta_size),
             DC_ERR_NOT_FOUND, "no entry");
  dc__kcache_destroy(c);
  free(dir);
}
END_TEST

START_TEST(test_kcache_large_entry_round_trips) {
  uint8_t key[32];
  key_of(16, key);
  size_t meta_size = 300 << 10;
  uint8_t* meta = malloc(meta_size);
  fill(meta, meta_size, 16);
  const char* so = fake_so("big.so", (size_t)3 << 20, 16);
  char path[DC_KCACHE_PATH_SIZE];
  DC_CK_OK(dc__kcache_store(cache, key, so, meta, meta_size, path,
                            sizeof(path)));
  expect_hit(cache, key, meta, meta_size, path);
  ck_assert_int_eq(file_size(path), (3 << 20) + (300 << 10) + FOOTER);
  free(meta);
}
END_TEST

START_TEST(test_kcache_allocator_failures) {
  dc_test_allocator_t counting = {0};
  dc_allocator_t allocator = dc_test_allocator(&counting);
  dc__kcache_t* c = NULL;
  counting.fail_at = 1;
  DC_CK_FAIL(dc__kcache_create(allocator, cache_dir, NULL, NULL, &c),
             DC_ERR_OUT_OF_MEMORY, "dc__kcache_create");
  ck_assert_ptr_null(c);
  counting.fail_at = 0;
  DC_CK_OK(dc__kcache_create(allocator, cache_dir, NULL, NULL, &c));
  uint8_t key[32];
  key_of(17, key);
  const char* so = fake_so("fake.so", 5000, 17);
  char entry[DC_KCACHE_PATH_SIZE];
  DC_CK_OK(dc__kcache_store(c, key, so, "meta", 4, entry, sizeof(entry)));
  char path[DC_KCACHE_PATH_SIZE];
  // Lookup allocates twice (the file, the metadata); fail each in turn.
  for (size_t n = 1; n <= 2; ++n) {
    counting.fail_at = atomic_load(&counting.attempts) + n;
    counting.fail_once = true;
    void* meta = NULL;
    size_t meta_size = 0;
    DC_CK_FAIL(dc__kcache_lookup(c, key, path, sizeof(path), &meta,
                                 &meta_size),
               DC_ERR_OUT_OF_MEMORY, "kernel cache");
    ck_assert_ptr_null(meta);
    ck_assert_str_eq(path, "");
    ck_assert(file_exists(entry));  // out of memory is not corruption
  }
  counting.fail_at = 0;
  void* meta = NULL;
  size_t meta_size = 0;
  DC_CK_OK(dc__kcache_lookup(c, key, path, sizeof(path), &meta,
                             &meta_size));
  dc_allocator_free(allocator, meta, meta_size);
  dc__kcache_stats_t s = stats_of(c);
  ck_assert_uint_eq(s.hits, 1);
  ck_assert_uint_eq(s.misses, 2);
  ck_assert_uint_eq(s.corrupt, 0);
  dc__kcache_destroy(c);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

static Suite* kcache_suite(void) {
  Suite* s = suite_create("kcache");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 120);  // the concurrency test, under sanitizers
  tcase_add_test(core, test_kcache_sha256_vectors);
  tcase_add_test(core, test_kcache_sha256_million_a_streamed);
  tcase_add_test(core, test_kcache_sha256_split_matches_one_shot);
  tcase_add_test(core, test_kcache_miss_store_hit);
  tcase_add_test(core, test_kcache_entry_dlopens_with_trailing_bytes);
  tcase_add_test(core, test_kcache_store_replaces_entry);
  tcase_add_test(core, test_kcache_empty_metadata);
  tcase_add_test(core, test_kcache_keys_are_independent);
  tcase_add_test(core, test_kcache_concurrent_writers_never_tear);
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_add_loop_test(errors, test_kcache_corrupt_entry_is_deleted, 0,
                      CORRUPTION_COUNT);
  tcase_add_test(errors, test_kcache_entry_that_is_a_directory_is_an_error);
  tcase_add_test(errors, test_kcache_store_missing_object_fails_cleanly);
  tcase_add_test(errors, test_kcache_invalid_arguments);
  tcase_add_test(errors, test_kcache_dir_under_a_file_is_off);
  tcase_add_test(errors, test_kcache_dir_failing_at_first_store_turns_off);
  suite_add_tcase(s, errors);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, setup, teardown);
  tcase_add_test(lifecycle, test_kcache_off_mode);
  tcase_add_test(lifecycle, test_kcache_dir_created_on_first_store);
  tcase_add_test(lifecycle, test_kcache_dir_recreated_after_removal);
  tcase_add_test(lifecycle, test_kcache_destroy_null_is_a_no_op);
  tcase_add_test(lifecycle, test_kcache_default_dir_from_env);
  suite_add_tcase(s, lifecycle);

  TCase* limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, setup, teardown);
  tcase_set_timeout(limits, 30);
  tcase_add_test(limits, test_kcache_path_buffer_sizes);
  tcase_add_test(limits, test_kcache_too_long_dir_is_off);
  tcase_add_test(limits, test_kcache_large_entry_round_trips);
  tcase_add_test(limits, test_kcache_allocator_failures);
  suite_add_tcase(s, limits);
  return s;
}

DC_CHECK_MAIN(kcache_suite)
