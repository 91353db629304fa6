// cache_source.cl: A source built with different -D options (check_program.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void k(__global int* o) {
  o[get_global_id(0)] = SCALE * (int)get_global_id(0);
}
