// defines.cl: Build options -D and -cl-fast-relaxed-math seen by the
// preprocessor (check_program.c).
// The runs and their expected outputs are in manifest.txt.
#ifndef FLAG
#error FLAG is not defined
#endif
__kernel void k(__global int* o) {
  o[0] = FLAG; o[1] = VALUE; o[2] = OTHER; o[3] = LAST;
#ifdef __FAST_RELAXED_MATH__
  o[4] = 1;
#else
  o[4] = 0;
#endif
}
