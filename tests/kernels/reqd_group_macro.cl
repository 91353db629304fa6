// reqd_group_macro.cl: reqd_work_group_size given by constant expressions of
// macros (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
#define TILE 16
#define ROWS 4
__kernel __attribute__((reqd_work_group_size(TILE, TILE / ROWS,
                                             (1 << 1) - 1)))
void k(__global int* o) { o[get_global_id(0)] = 1; }
