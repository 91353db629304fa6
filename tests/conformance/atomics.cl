// atomics.cl: OpenCL C 1.2 section 6.12.11 (atomic functions) and the
// cl_khr_{global,local}_int32_{base,extended}_atomics forms with the atom_
// prefix (9.5, 9.6), on __global and __local int and uint: add, sub, xchg,
// inc, dec, cmpxchg, min, max, and, or, xor. Every result checked is
// independent of the order in which work-items run: final values of
// commutative updates, sums of the old values that atomic_inc returns
// (each value 0 .. n-1 exactly once), a permutation check of those
// tickets, and compare-and-swap loops that implement other updates.
// The runs and their expected outputs are in manifest.txt.
#pragma OPENCL EXTENSION cl_khr_global_int32_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_global_int32_extended_atomics : enable
#pragma OPENCL EXTENSION cl_khr_local_int32_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_local_int32_extended_atomics : enable

// __global int (v) and uint (u) counters, updated by every work-item; the
// tickets that atomic_inc hands out mark seen[ticket]. x[0] ends with
// whichever value was exchanged last, so it is not compared.
__kernel void global_ops(__global int* v, __global uint* u,
                         __global int* seen, __global uint* x) {
  int g = (int)get_global_id(0);
  atomic_add(&v[0], g);
  atomic_sub(&v[1], 2 * g);
  atomic_min(&v[2], g - 1000);
  atomic_max(&v[3], g * 7);
  atomic_and(&v[4], ~(1 << (g % 31)));
  atomic_or(&v[5], 1 << (g % 31));
  atomic_xor(&v[6], g * 0x10001);
  int ticket = atomic_inc(&v[7]);            // 0 .. n-1, once each
  atomic_add(&v[8], ticket);                  // their sum
  atomic_add(&seen[ticket], 1);
  int down = atomic_dec(&v[9]);               // starts at 0: 0, -1, ...
  atomic_add(&v[10], down);
  int old;
  do {                                        // v[11] += g * g with CAS
    old = v[11];
  } while (atomic_cmpxchg(&v[11], old, old + g * g) != old);
  atomic_xchg(&v[12], 42);                    // every one stores 42
  atom_add(&u[0], (uint)g);
  atom_sub(&u[1], 1u);
  atom_inc(&u[2]);
  atom_dec(&u[3]);
  atom_min(&u[4], (uint)g + 5u);
  atom_max(&u[5], (uint)g << 20);
  atom_and(&u[6], ~(1u << (g % 32)));
  atom_or(&u[7], 1u << (g % 32));
  atom_xor(&u[8], (uint)g);
  uint was = atom_xchg(&x[0], (uint)g);      // one stored before, or 7
  atom_add(&u[9], was < (uint)get_global_size(0) || was == 7u);
  uint o;
  do {
    o = u[10];
  } while (atom_cmpxchg(&u[10], o, o ^ (uint)(g + 1)) != o);
}

// The same on __local memory: each group counts its own work-items, then
// work-item 0 publishes the group's results.
__kernel void local_ops(__global int* out, __local int* t, __local uint* w) {
  __local int tickets[256];
  int l = (int)get_local_id(0), n = (int)get_local_size(0);
  if (l == 0) {
    for (int k = 0; k < 12; ++k) { t[k] = 0; w[k] = 0; }
    t[2] = 1 << 30;
    t[3] = -(1 << 30);
    t[4] = -1;
    w[4] = 0xffffffffu;
  }
  tickets[l] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add(&t[0], l);
  atomic_sub(&t[1], l * 3);
  atomic_min(&t[2], l - 7);
  atomic_max(&t[3], l * 11);
  atomic_and(&t[4], ~(1 << (l % 31)));
  atomic_or(&t[5], 1 << (l % 31));
  atomic_xor(&t[6], l);
  int ticket = atomic_inc(&t[7]);
  atomic_add(&t[8], ticket);
  atomic_inc(&tickets[ticket]);
  atomic_dec(&t[9]);
  int old;
  do {
    old = t[10];
  } while (atomic_cmpxchg(&t[10], old, old + 2) != old);
  atomic_xchg(&t[11], -5);
  atom_add(&w[0], 3u);
  atom_inc(&w[1]);
  atom_dec(&w[2]);
  atom_max(&w[3], (uint)l * 5u);
  atom_min(&w[4], (uint)l + 100u);
  atom_or(&w[5], 1u << (l % 32));
  barrier(CLK_LOCAL_MEM_FENCE);
  // every ticket was handed out once
  int once = tickets[l] == 1;
  atomic_and(&t[11], once ? -1 : 0);        // stays -5 only if all were
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    __global int* o = out + get_group_id(0) * 18;
    for (int k = 0; k < 12; ++k) o[k] = t[k];
    for (int k = 0; k < 6; ++k) o[12 + k] = (int)w[k];
  }
}

// A histogram in __local memory merged into __global memory, and a
// work-group reduction with atomic_max of float bits (non-negative floats
// order like their bits).
__kernel void histogram(__global const uint* data, __global uint* bins,
                        __global int* maxbits, __local uint* local_bins,
                        uint nbins) {
  size_t l = get_local_id(0), n = get_local_size(0);
  for (size_t b = l; b < nbins; b += n) local_bins[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint v = data[get_global_id(0)];
  atomic_inc(&local_bins[v % nbins]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t b = l; b < nbins; b += n) atomic_add(&bins[b], local_bins[b]);
  float f = (float)(v % 1000) * 0.5f;
  atomic_max(&maxbits[0], as_int(f));
}
