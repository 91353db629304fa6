// relational_geometric.cl: the relational built-ins (scalars give 1/0,
// vectors -1/0 lanes) on ordinary and special values (NaN, infinities,
// signed zeros, denormals), any/all, select and bitselect, and the
// geometric built-ins.
// The runs and their expected outputs are in manifest.txt.

// The NaN that arithmetic makes has no defined bits (x86 passes an
// operand's payload on, a GPU gives its canonical NaN), so the sums and
// products below are canonicalised before select and bitselect move their
// bits; loads and select/bitselect themselves keep a NaN's bits exactly.
float canonical_nan(float x) { return isnan(x) ? as_float(0x7fc00000) : x; }

__kernel void relational(__global const float* x, __global const double* y,
                         __global int* out, __global long* lout) {
  size_t i = get_global_id(0);
  float a = x[2 * i], b = x[2 * i + 1];
  double c = y[2 * i], d = y[2 * i + 1];
  __global int* o = out + i * 32;
  o[0] = isequal(a, b); o[1] = isnotequal(a, b); o[2] = isgreater(a, b);
  o[3] = isgreaterequal(a, b); o[4] = isless(a, b);
  o[5] = islessequal(a, b); o[6] = islessgreater(a, b);
  o[7] = isfinite(a); o[8] = isinf(a); o[9] = isnan(a); o[10] = isnormal(a);
  o[11] = signbit(a); o[12] = isordered(a, b); o[13] = isunordered(a, b);
  o[14] = isequal(c, d); o[15] = isless(c, d); o[16] = isnan(c);
  o[17] = isinf(d); o[18] = signbit(d); o[19] = isnormal(c);
  float4 va = (float4)(a, b, canonical_nan(a + b), canonical_nan(a * b));
  float4 vb = (float4)(b, a, b, 0.0f);
  int4 m = isless(va, vb) | (isnan(va) & 2) | (signbit(vb) & 4);
  o[20] = m.x; o[21] = m.y; o[22] = m.z; o[23] = m.w;
  o[24] = any(m); o[25] = all(m); o[26] = any((int)i - 3); o[27] = all(m | (int4)(-1));
  float4 s = select(va, vb, m);
  float4 t = bitselect(va, vb, (float4)(as_float(0x80000000)));
  o[28] = as_int(s.x) ^ as_int(s.w);
  o[29] = as_int(t.y) ^ as_int(t.z);
  o[30] = as_int(select(a, b, (int)i & 1));
  o[31] = as_int(bitselect(a, b, as_float(0x007fffff)));
  double2 vc = (double2)(c, d), vd = (double2)(d, c);
  long2 l = isgreater(vc, vd) + isnan(vc) * 2 + isequal(vc, vd) * 4;
  __global long* lo = lout + i * 4;
  lo[0] = l.x; lo[1] = l.y;
  double2 sel = select(vc, vd, isgreater(vc, vd));
  lo[2] = as_long(sel.x); lo[3] = any(l) + 2 * all(l);
}

__kernel void geometric(__global const float4* x, __global float* out,
                        __global double* dout) {
  size_t i = get_global_id(0);
  float4 a = x[2 * i], b = x[2 * i + 1];
  __global float* o = out + i * 16;
  o[0] = dot(a, b); o[1] = length(a); o[2] = distance(a, b);
  float4 n = normalize(a);
  o[3] = n.x; o[4] = n.w;
  float4 c = cross(a, b);
  o[5] = c.x; o[6] = c.y; o[7] = c.z; o[8] = c.w;
  o[9] = fast_length(a); o[10] = fast_distance(a, b);
  float4 f = fast_normalize(b);
  o[11] = f.y;
  o[12] = dot(a.xy, b.zw); o[13] = length(a.x); o[14] = length(a.lo);
  float2 n2 = normalize(b.hi);
  o[15] = n2.x;
  double4 da = convert_double4(a) * 1e200, db = convert_double4(b);
  __global double* d = dout + i * 4;
  d[0] = length(da); d[1] = dot(db, db);
  double4 dn = normalize(da);
  d[2] = dn.z; d[3] = distance(db, (double4)(1.0));
}
