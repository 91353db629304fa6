// control_flow.cl: the statements of C99 section 6.8, which OpenCL C 1.2
// keeps (with the restrictions of its section 6.9: no recursion is
// required, so none is used), and barriers (6.12.8) inside control flow
// whose conditions are the same for every work-item of a group: switch
// with fallthrough, default in the middle and nested switches; goto
// forwards and backwards and out of nested loops; while, do-while and
// for with break and continue; comma expressions in for; early returns
// from helpers and from the kernel; barriers in loops with uniform trip
// counts, in uniform branches, and a loop left by a uniform break.
// The runs and their expected outputs are in manifest.txt.

int classify(int v) {
  int r = 0;
  switch (v % 6) {
    case 0:
      r += 1;              // falls through
    case 1:
      r += 10;
      break;
    default:
      r += 100;            // in the middle; falls through
    case 4:
      r += 1000;
      break;
    case 5: {
      int t = v * 2;
      switch (t % 4) {     // nested
        case 0: r = -1; break;
        case 2: r = -2; break;
      }
      break;
    }
  }
  return r;
}

int first_factor(int v) {
  if (v < 2) return 0;                 // early returns
  for (int d = 2; d * d <= v; ++d) {
    if (v % d == 0) return d;
  }
  return v;
}

int collatz(int v) {
  int steps = 0;
again:
  if (v == 1) goto done;               // forwards
  v = v % 2 ? 3 * v + 1 : v / 2;
  ++steps;
  goto again;                          // backwards
done:
  return steps;
}

int find_pair(int target, int limit) {
  int i, j;
  for (i = 0; i < limit; ++i) {
    for (j = i; j < limit; ++j) {
      if (i * j == target) goto found;  // out of two loops
    }
  }
  return -1;
found:
  return i * 100 + j;
}

__kernel void statements(__global const int* in, __global int* out, int n) {
  size_t g = get_global_id(0);
  if (g >= (size_t)n) return;           // the kernel's own early return
  int v = in[g];
  __global int* o = out + g * 10;
  o[0] = classify(v);
  o[1] = first_factor(v);
  o[2] = collatz(v < 1 ? 1 : v);
  o[3] = find_pair(v, 12);
  int s = 0, k = 0;
  while (1) {                           // break and continue in while
    if (++k > v) break;
    if (k % 3 == 0) continue;
    s += k;
  }
  o[4] = s;
  int d = 0, t = v;
  do {                                  // do-while runs at least once
    d += t & 1;
    t >>= 1;
  } while (t > 0);
  o[5] = d;
  int p = 0, q;
  for (q = 0, k = v; k > 0 && q < 50; k -= 2, ++q) p += k;  // commas
  o[6] = p * 100 + q;
  int w = 0;
  for (int a = 0; a < 5; ++a) {
    if (a == v % 5) continue;
    for (int b = 0; b < 5; ++b) {
      if (b > a) break;
      w += a * b;
    }
  }
  o[7] = w;
  int e = v > 10 ? (v > 20 ? 3 : 2) : v > 0 ? 1 : 0;
  o[8] = e;
  int c = 0;
  for (;;) {                            // a loop with no condition
    c += 7;
    if (c > v) break;
  }
  o[9] = c;
}

// Barriers in control flow that every work-item of the group takes the
// same way (6.12.8): a loop whose trip count is a kernel argument, a
// branch on the group id, a loop with a uniform break. t is __local
// (local_size ints).
__kernel void barriers(__global const int* in, __global int* out,
                       __local int* t, int rounds) {
  size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
  t[l] = in[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int r = 0; r < rounds; ++r) {    // uniform trip count
    int left = t[(l + n - 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);
    t[l] += left;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  int after_loop = t[l];
  if (get_group_id(0) % 2 == 0) {       // uniform within a group
    t[l] = t[l] * 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    after_loop += t[(l + 1) % n];
  } else {
    barrier(CLK_LOCAL_MEM_FENCE);
    after_loop -= 1;
  }
  out[g * 2 + 0] = after_loop;
  // a tree reduction: the loop's condition depends only on n
  barrier(CLK_LOCAL_MEM_FENCE);
  t[l] = in[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t h = n / 2; h > 0; h /= 2) {
    if (l < h) t[l] += t[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  out[g * 2 + 1] = t[0];
}

// A loop containing a barrier, left by a break whose condition every
// work-item computes alike (from __local data after the barrier).
__kernel void uniform_break(__global int* out, __local int* t, int limit) {
  size_t l = get_local_id(0), n = get_local_size(0);
  int total = 0, rounds = 0;
  for (;;) {
    t[l] = (int)l + rounds;
    barrier(CLK_LOCAL_MEM_FENCE);
    total += t[(l + 1) % n];
    int sum0 = t[0] + t[n - 1];         // the same for every work-item
    barrier(CLK_LOCAL_MEM_FENCE);
    ++rounds;
    if (sum0 > limit) break;
  }
  out[get_global_id(0) * 2 + 0] = total;
  out[get_global_id(0) * 2 + 1] = rounds;
}
