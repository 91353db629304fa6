// unterminated_call.cl: a macro call the source ends inside.
#define F(x, y) ((x) + (y))
#define G(...) F(__VA_ARGS__)
__kernel void k(__global int* o) {
  o[0] = G(1, F(2,
