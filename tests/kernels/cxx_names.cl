// cxx_names.cl: C that is not C++, which the CUDA device compiles as C++:
// names that are C++ keywords, void pointers converted implicitly, plain
// char (signed), goto and case labels past declarations, narrowing
// initialisers, doubled qualifiers. Every result is exact.
// The runs and their expected outputs are in manifest.txt.
typedef const int cint;
int this_one(int new, int class) { return new * 10 + class; }
float from_void(__global void* p, int i) {
  __global float* f = p;
  return f[i];
}
__kernel void names(__global void* raw, __global int* out, char c,
                    __local void* scratch) {
  int i = get_global_id(0);
  int template = i, operator = 2, delete = 3, and = 4, or = 5, not = 6;
  int virtual = this_one(template, operator);
  const cint doubled = 7;
  __global int* as_ints = raw;
  __local int* s = scratch;
  s[get_local_id(0)] = i;
  void* none = 0;
  out[i * 12 + 0] = virtual + delete + and + or + not + doubled;
  out[i * 12 + 1] = (int)from_void(raw, 0) + (none == 0);
  out[i * 12 + 2] = c;
  char plain = (char)200;
  unsigned char uc = (unsigned char)200;
  signed char sc = (signed char)200;
  out[i * 12 + 3] = plain + uc + sc;
  int narrow[2] = {3.7, i * 1.5};
  out[i * 12 + 4] = narrow[0] * 100 + narrow[1];
  if (i % 2) goto odd;
  int skipped = 5;
  out[i * 12 + 5] = skipped;
odd:
  switch (i % 3) {
    case 0:;
      int in_case = 11;
      out[i * 12 + 6] = in_case;
      break;
    default:
      out[i * 12 + 6] = -1;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  out[i * 12 + 7] = s[(get_local_id(0) + 1) % get_local_size(0)];
  out[i * 12 + 8] = 'a' + sizeof('a');
  out[i * 12 + 9] = as_ints[1] != 0;
  uintptr_t addr = (uintptr_t)raw;
  out[i * 12 + 10] = (int)(addr % 4);
  size_t sz = sizeof(void*) + sizeof(char) + sizeof(long);
  out[i * 12 + 11] = (int)sz;
}
