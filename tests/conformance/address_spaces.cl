// address_spaces.cl: OpenCL C 1.2 section 6.5 (address space qualifiers):
// __global (6.5.1) buffers and pointers into them, __local (6.5.2) arrays
// declared in a kernel and __local pointer arguments sized by the
// dispatch, __constant (6.5.3) program-scope variables and arrays (scalar,
// 2-D, vector) and __constant pointer arguments, __private (6.5.4)
// variables, arrays and pointers (qualified or not); pointer arithmetic,
// differences, comparisons and indexing within each address space, in
// kernels and in helper functions that take pointers to each space;
// const, volatile and restrict qualified pointers; and a pointer cast to
// another type within its space (char pointers read the bytes of any
// object).
// STRING_INIT (a __constant char array initialised by a string literal,
// C99 6.7.8) is compiled only when the manifest's program line defines
// it.
// The runs and their expected outputs are in manifest.txt.

__constant int kPrimes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
__constant int kGrid[3][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}, {100, 200}};
__constant float kHalf = 0.5f;
__constant float4 kWeights = (float4)(1.0f, 10.0f, 100.0f, 1000.0f);
__constant char kWord[6] = {'h', 'e', 'l', 'l', 'o', 0};

int sum_global(__global const int* p, int n) {
  int s = 0;
  for (__global const int* q = p; q < p + n; ++q) s += *q;
  return s;
}

int sum_constant(__constant int* p, int n) {
  int s = 0;
  for (int k = 0; k < n; ++k) s += p[k];
  return s;
}

int sum_local(__local const int* p, int n) {
  int s = 0;
  while (n-- > 0) s += *p++;
  return s;
}

int sum_private(const int* p, int n) {   // unqualified: __private
  int s = 0;
  for (int k = n - 1; k >= 0; --k) s += *(p + k);
  return s;
}

void put_private(__private int* p, int v) { *p = v; }

// Every space in one kernel; each work-item writes 16 results.
__kernel void spaces(__global const int* restrict in, __constant int* table,
                     __local int* scratch, __global int* restrict out) {
  __local int tile[64];
  size_t g = get_global_id(0), l = get_local_id(0), n = get_local_size(0);
  tile[l] = in[g];
  scratch[l] = in[g] * 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  __global int* o = out + g * 16;
  // __global pointer arithmetic
  __global const int* p = in + g;
  __global const int* base = in;
  o[0] = (int)(p - base);                         // g
  o[1] = p > base;                                // 1 unless g == 0
  o[2] = (p == &in[g]) + (p + 1 == in + (g + 1)) * 10 + (p[0] == *p) * 100;
  o[3] = sum_global(in + (g - l), (int)n);        // the group's inputs
  // __local: arrays and pointer arguments
  __local int* lp = &tile[l];
  o[4] = sum_local(tile, (int)n);
  o[5] = sum_local(scratch, (int)n);
  o[6] = lp[0] + *(lp - l);                       // own + first
  o[7] = (int)(lp - tile) + (int)(&scratch[n - 1] - scratch) * 100;
  o[8] = (lp >= tile) + (lp < tile + n) * 10;     // 11
  // __constant: program scope and arguments
  __constant int* cp = kPrimes + (g % 8);
  o[9] = *cp + cp[-(int)(g % 8)];                 // prime + 2
  o[10] = sum_constant(kPrimes, 8) + sum_constant(table, 4);
  o[11] = kGrid[g % 3][l % 4] + (int)(kHalf * 4.0f);
  o[12] = (int)dot(kWeights, (float4)(1.0f, 2.0f, 3.0f, 4.0f)) +
          kWord[g % 5];
  __constant int* row = kGrid[2];
  o[13] = (int)(row - &kGrid[0][0]);              // 8
  // __private: arrays, pointers, qualified or not
  int arr[5];
  __private int* pp = arr;
  for (int k = 0; k < 5; ++k) pp[k] = (int)g * k;
  put_private(&arr[4], -1);
  int x = 3;
  int* px = &x;
  *px += 4;
  o[14] = sum_private(arr, 5) + x * 1000;         // 6g - 1 + 7000
  o[15] = (int)(&arr[4] - pp) + (pp + 2 < &arr[3]) * 10;  // 14
}

// A __local array used as a work-group's shared memory through a
// volatile pointer, a pointer to a __local array of structs' members,
// and a __global pointer cast to a char pointer within its space.
typedef struct {
  int key;
  float weight;
} item_t;

__kernel void pointers(__global int* data, __global uchar* bytes,
                       __global int* out) {
  __local item_t items[32];
  __local int counts[32];
  size_t g = get_global_id(0), l = get_local_id(0), n = get_local_size(0);
  volatile __local int* vc = counts;
  vc[l] = 0;
  items[l].key = data[g] % 7;
  items[l].weight = (float)data[g] * 0.5f;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local item_t* it = items;
  int same = 0;
  float wsum = 0.0f;
  for (__local item_t* e = it; e != it + n; ++e) {
    same += e->key == items[l].key;
    wsum += e->weight;
  }
  __local float* wp = &items[l].weight;
  __global uchar* b = (__global uchar*)(data + g);   // the bytes of data[g]
  bytes[g * 4 + 0] = b[0];
  bytes[g * 4 + 1] = b[1];
  bytes[g * 4 + 2] = b[2];
  bytes[g * 4 + 3] = b[3];
  out[g * 3 + 0] = same;
  out[g * 3 + 1] = (int)wsum;
  out[g * 3 + 2] = (int)(*wp * 2.0f) - data[g];     // 0
}

#ifdef STRING_INIT
// C99 6.7.8p14: "An array of character type may be initialized by a
// character string literal", here in the __constant space; the array's
// size comes from the string when it is left out.
__constant char kGreeting[] = "hello, world";
__constant uchar kShort[8] = "abc";   // the rest is zero

__kernel void string_init(__global int* o) {
  int i = (int)get_global_id(0);
  o[i * 4 + 0] = kGreeting[i];
  o[i * 4 + 1] = (int)sizeof(kGreeting);
  o[i * 4 + 2] = kShort[i % 8];
  o[i * 4 + 3] = (int)sizeof(kShort);
}
#endif
