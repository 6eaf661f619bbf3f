/* Omoide vector kernel: brute-force top-k over L2-normalized float32 rows, in WebAssembly.
 *
 * Built by buildtools/kernel.py with Debian clang + wasm-ld, no libc and no Emscripten:
 *   clang --target=wasm32 -O3 [-msimd128] -mbulk-memory -nostdlib
 *         -Wl,--no-entry -Wl,--export-dynamic
 * twice: with -msimd128 (topk.wasm) and without (topk-scalar.wasm, for engines lacking SIMD).
 *
 * One instance holds ONE vector index in its own linear memory:
 *
 *   [static data + stack][ scales: cap f32 ][ int8 rows: cap x qstride ][ float rows: cap x dim ]
 *   [ scratch: query, int8 query, stats, outputs, heap, subset ]
 *
 * - float rows are dense and row-major (stride = dim), so a block of rows is one contiguous
 *   span: the caller writes new rows straight into the tail of the float matrix
 *   (vk_append_ptr) and commits them (vk_commit); there is no separate staging copy.
 * - every row also has an int8 copy (per-row symmetric scale, q = rint(v * 127 / max|v|)),
 *   padded to a multiple of 16 bytes with zeros so the SIMD loop needs no tail.
 * - capacity doubles when rows are added; the regions are moved up in place (memory.copy,
 *   highest region first) after memory.grow. The scratch area is transient: its pointers are
 *   valid until the next call that may grow (vk_reserve, vk_append_ptr, vk_prepare).
 *
 * Scores are dot products (= cosines for normalized rows). Top-k keeps a min-heap of k
 * (score, row) pairs; ties are broken by the lower row index, like the numpy reference.
 * Modes: exact float32 scan; or int8 scan keeping the best `cand` rows, then an exact float32
 * rerank of those candidates (returned scores are always exact float32 dot products).
 * mean/std of the scanned scores (exact or int8-approximate) are reported for hybrid fusion.
 */

#include <stdint.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define EXPORT(name) __attribute__((export_name(#name))) name

#define PAGE 65536u
#define ALIGN16(x) (((x) + 15u) & ~15u)

extern unsigned char __heap_base;

/* ---- state ------------------------------------------------------------------------------ */

static uint32_t g_dim;       /* floats per row */
static uint32_t g_qstride;   /* bytes per int8 row (dim rounded up to 16) */
static uint32_t g_count;     /* rows in use */
static uint32_t g_cap;       /* rows allocated */
static uint32_t g_base;      /* first byte we own (16-aligned, after __heap_base) */
static float *g_scale;       /* cap dequantization scales */
static int8_t *g_q;          /* cap x qstride int8 rows */
static float *g_rows;        /* cap x dim float rows */

/* scratch, laid out by vk_prepare after the float rows */
static uint32_t g_scratch;   /* start of scratch */
static uint32_t g_scratch_end;
static float *s_query;       /* dim floats */
static int8_t *s_qquery;     /* qstride bytes */
static double *s_stats;      /* [sum, sum of squares, scanned count, query scale] */
static int32_t *s_out_idx;   /* m = max(k, n) row indices */
static float *s_out_score;   /* m scores */
static float *s_heap_score;  /* heap of max(k, cand) entries */
static int32_t *s_heap_idx;
static int32_t *s_subset;    /* n row indices */
static uint32_t s_k, s_cand, s_n;

/* ---- memory ------------------------------------------------------------------------------ */

static int ensure_memory(uint32_t end) {
  uint32_t have = (uint32_t)__builtin_wasm_memory_size(0);
  uint32_t need = (uint32_t)(((uint64_t)end + PAGE - 1) / PAGE);
  if (need <= have) return 0;
  if (__builtin_wasm_memory_grow(0, need - have) == (__SIZE_TYPE__)-1) return -1;
  return 0;
}

/* Region offsets for a given capacity; returns 0 when the layout would not fit in 4 GiB. */
static int layout(uint32_t cap, uint32_t *scale_at, uint32_t *q_at, uint32_t *rows_at,
                  uint32_t *end) {
  uint64_t at = g_base;
  *scale_at = (uint32_t)at;
  at = ALIGN16(at + (uint64_t)cap * 4u);
  *q_at = (uint32_t)at;
  at = ALIGN16(at + (uint64_t)cap * g_qstride);
  *rows_at = (uint32_t)at;
  at = ALIGN16(at + (uint64_t)cap * g_dim * 4u);
  if (at >= 0xFFFF0000ull) return 0;
  *end = (uint32_t)at;
  return 1;
}

static uint32_t rows_end(void) {
  return (uint32_t)ALIGN16((uint32_t)(uintptr_t)g_rows + g_cap * g_dim * 4u);
}

/* ---- quantization ------------------------------------------------------------------------ */

#ifdef __wasm_simd128__
/* rint(v * scale) of four floats, as i32 lanes */
static inline v128_t quantize_lanes(const float *v, v128_t scale) {
  return wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(wasm_v128_load(v), scale)));
}
#endif

static float quantize(const float *v, int8_t *q) {
  float peak = 0.0f;
  uint32_t j = 0;
#ifdef __wasm_simd128__
  /* The same operations four lanes at a time (boot quantizes every row it loads: 100,000
   * rows took ~0.5 s one float at a time): |v| and max are exact, the multiply is the same
   * float32 product, f32x4.nearest rounds half to even like rintf, and |v * inv| <= 127 (up
   * to an ulp), so the saturating narrows never clamp: the same bytes as the scalar loop. */
  v128_t most = wasm_f32x4_splat(0.0f);
  for (; j + 4 <= g_dim; j += 4)
    most = wasm_f32x4_max(most, wasm_f32x4_abs(wasm_v128_load(v + j)));
  float lanes[4];
  wasm_v128_store(lanes, most);
  for (uint32_t lane = 0; lane < 4; lane++) peak = lanes[lane] > peak ? lanes[lane] : peak;
#endif
  for (; j < g_dim; j++) {
    float a = __builtin_fabsf(v[j]);
    peak = a > peak ? a : peak;
  }
  if (peak == 0.0f) peak = 1.0f;
  float inv = 127.0f / peak;
  j = 0;
#ifdef __wasm_simd128__
  v128_t scale = wasm_f32x4_splat(inv);
  for (; j + 16 <= g_dim; j += 16) {
    v128_t a = quantize_lanes(v + j, scale), b = quantize_lanes(v + j + 4, scale);
    v128_t c = quantize_lanes(v + j + 8, scale), d = quantize_lanes(v + j + 12, scale);
    wasm_v128_store(q + j, wasm_i8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(a, b),
                                                   wasm_i16x8_narrow_i32x4(c, d)));
  }
#endif
  for (; j < g_dim; j++) {
    float r = __builtin_rintf(v[j] * inv);
    r = r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r);
    q[j] = (int8_t)r;
  }
  for (j = g_dim; j < g_qstride; j++) q[j] = 0;
  return peak / 127.0f;
}

/* ---- dot products ------------------------------------------------------------------------ */

static inline float dot_f32(const float *a, const float *b, uint32_t n) {
#ifdef __wasm_simd128__
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
  uint32_t j = 0;
  for (; j + 16 <= n; j += 16) {
    s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + j), wasm_v128_load(b + j)));
    s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(wasm_v128_load(a + j + 4), wasm_v128_load(b + j + 4)));
    s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(wasm_v128_load(a + j + 8), wasm_v128_load(b + j + 8)));
    s3 = wasm_f32x4_add(s3,
                        wasm_f32x4_mul(wasm_v128_load(a + j + 12), wasm_v128_load(b + j + 12)));
  }
  for (; j + 4 <= n; j += 4)
    s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + j), wasm_v128_load(b + j)));
  v128_t s = wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3));
  float total = wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) +
                wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3);
  for (; j < n; j++) total += a[j] * b[j];
  return total;
#else
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
  uint32_t j = 0;
  for (; j + 4 <= n; j += 4) {
    s0 += a[j] * b[j];
    s1 += a[j + 1] * b[j + 1];
    s2 += a[j + 2] * b[j + 2];
    s3 += a[j + 3] * b[j + 3];
  }
  float total = (s0 + s1) + (s2 + s3);
  for (; j < n; j++) total += a[j] * b[j];
  return total;
#endif
}

/* int8 . int8 over qstride bytes (a multiple of 16, zero padded). |q| <= 127, so two
 * products add up to at most 32258 and fit an i16 lane before widening to i32. */
static inline int32_t dot_i8(const int8_t *a, const int8_t *b, uint32_t n) {
#ifdef __wasm_simd128__
  v128_t acc = wasm_i32x4_splat(0);
  for (uint32_t j = 0; j < n; j += 16) {
    v128_t x = wasm_v128_load(a + j), y = wasm_v128_load(b + j);
    v128_t p = wasm_i16x8_add(wasm_i16x8_extmul_low_i8x16(x, y),
                              wasm_i16x8_extmul_high_i8x16(x, y));
    acc = wasm_i32x4_add(acc, wasm_i32x4_extadd_pairwise_i16x8(p));
  }
  return wasm_i32x4_extract_lane(acc, 0) + wasm_i32x4_extract_lane(acc, 1) +
         wasm_i32x4_extract_lane(acc, 2) + wasm_i32x4_extract_lane(acc, 3);
#else
  int32_t s0 = 0, s1 = 0;
  for (uint32_t j = 0; j < n; j += 2) {
    s0 += (int32_t)a[j] * b[j];
    s1 += (int32_t)a[j + 1] * b[j + 1];
  }
  return s0 + s1;
#endif
}

/* ---- bounded min-heap of (score, row): the root is the worst kept entry ------------------ */

typedef struct {
  float *score;
  int32_t *idx;
  uint32_t size, cap;
} heap_t;

/* a is worse than b: lower score, or equal score and higher row index */
static inline int worse(float sa, int32_t ia, float sb, int32_t ib) {
  return sa < sb || (sa == sb && ia > ib);
}

static void sift_down(heap_t *h, uint32_t i) {
  float s = h->score[i];
  int32_t x = h->idx[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->size) break;
    if (c + 1 < h->size && worse(h->score[c + 1], h->idx[c + 1], h->score[c], h->idx[c])) c++;
    if (!worse(h->score[c], h->idx[c], s, x)) break;
    h->score[i] = h->score[c];
    h->idx[i] = h->idx[c];
    i = c;
  }
  h->score[i] = s;
  h->idx[i] = x;
}

static inline void heap_offer(heap_t *h, float s, int32_t x) {
  if (h->size < h->cap) {
    uint32_t i = h->size++;
    while (i > 0) {  /* sift up */
      uint32_t p = (i - 1) / 2;
      if (!worse(s, x, h->score[p], h->idx[p])) break;
      h->score[i] = h->score[p];
      h->idx[i] = h->idx[p];
      i = p;
    }
    h->score[i] = s;
    h->idx[i] = x;
  } else if (worse(h->score[0], h->idx[0], s, x)) {
    h->score[0] = s;
    h->idx[0] = x;
    sift_down(h, 0);
  }
}

/* Pops every entry, writing them best first into out; returns how many. */
static uint32_t heap_drain(heap_t *h, int32_t *out_idx, float *out_score) {
  uint32_t n = h->size;
  while (h->size > 0) {
    uint32_t at = h->size - 1;
    out_idx[at] = h->idx[0];
    out_score[at] = h->score[0];
    h->size--;
    if (h->size > 0) {
      h->score[0] = h->score[h->size];
      h->idx[0] = h->idx[h->size];
      sift_down(h, 0);
    }
  }
  return n;
}

/* ---- API: setup and capacity ------------------------------------------------------------- */

/* Resets the index to `dim` floats per row. Returns 0, or -1 for a bad dimension. */
int32_t EXPORT(vk_init)(int32_t dim) {
  if (dim <= 0 || dim > (1 << 20)) return -1;
  g_dim = (uint32_t)dim;
  g_qstride = ALIGN16((uint32_t)dim);
  g_count = 0;
  g_cap = 0;
  g_base = ALIGN16((uint32_t)(uintptr_t)&__heap_base);
  uint32_t scale_at, q_at, rows_at, end;
  layout(0, &scale_at, &q_at, &rows_at, &end);
  g_scale = (float *)(uintptr_t)scale_at;
  g_q = (int8_t *)(uintptr_t)q_at;
  g_rows = (float *)(uintptr_t)rows_at;
  g_scratch = g_scratch_end = end;
  s_k = s_cand = s_n = 0;
  return 0;
}

int32_t EXPORT(vk_dim)(void) { return (int32_t)g_dim; }
int32_t EXPORT(vk_count)(void) { return (int32_t)g_count; }
int32_t EXPORT(vk_capacity)(void) { return (int32_t)g_cap; }
uint32_t EXPORT(vk_rows_ptr)(void) { return (uint32_t)(uintptr_t)g_rows; }
uint32_t EXPORT(vk_int8_ptr)(void) { return (uint32_t)(uintptr_t)g_q; }
uint32_t EXPORT(vk_scales_ptr)(void) { return (uint32_t)(uintptr_t)g_scale; }

/* Ensures room for `rows` rows. 0 on success, -1 out of memory. An empty store gets exactly
 * that (a bulk load knows its size: 100,000 rows must not hold 131,072); a growing one doubles
 * up to GROW_SLOW rows and grows by a quarter from there (amortized O(1) appends either way,
 * and one memory at 100,000 rows does not double the kernel). */
#define GROW_SLOW 65536u
int32_t EXPORT(vk_reserve)(int32_t rows) {
  if (g_dim == 0 || rows < 0) return -1;
  uint32_t want = (uint32_t)rows;
  if (want <= g_cap) return 0;
  uint32_t cap = g_cap < 16 ? 16 : g_cap;
  if (g_count == 0) cap = want;
  while (cap < want) {
    uint32_t step = cap < GROW_SLOW ? cap : cap / 4u;
    cap = cap > 0x7FFFFFFFu - step ? want : cap + step;
  }
  uint32_t scale_at, q_at, rows_at, end;
  if (!layout(cap, &scale_at, &q_at, &rows_at, &end)) {
    cap = want;  /* doubling does not fit: try the exact size */
    if (!layout(cap, &scale_at, &q_at, &rows_at, &end)) return -1;
  }
  if (ensure_memory(end) != 0) return -1;
  /* Every region only moves up, and the highest one moves first, so nothing that is still
   * needed is overwritten; memory.copy has memmove semantics for the overlaps. */
  __builtin_memmove((void *)(uintptr_t)rows_at, g_rows, (__SIZE_TYPE__)g_count * g_dim * 4u);
  __builtin_memmove((void *)(uintptr_t)q_at, g_q, (__SIZE_TYPE__)g_count * g_qstride);
  __builtin_memmove((void *)(uintptr_t)scale_at, g_scale, (__SIZE_TYPE__)g_count * 4u);
  g_scale = (float *)(uintptr_t)scale_at;
  g_q = (int8_t *)(uintptr_t)q_at;
  g_rows = (float *)(uintptr_t)rows_at;
  g_cap = cap;
  g_scratch = g_scratch_end = end;  /* scratch must be laid out again */
  s_k = s_cand = s_n = 0;
  return 0;
}

/* ---- API: writes ------------------------------------------------------------------------- */

/* Reserves room for n more rows and returns where row `count` starts in the float matrix:
 * the caller writes n rows there, then calls vk_commit(n). 0 when out of memory. */
uint32_t EXPORT(vk_append_ptr)(int32_t n) {
  if (n < 0 || vk_reserve((int32_t)(g_count + (uint32_t)n)) != 0) return 0;
  return (uint32_t)(uintptr_t)(g_rows + (uint64_t)g_count * g_dim);
}

/* Quantizes the n rows written after the last row and makes them part of the index.
 * Returns the new row count, or -1 if n rows were not reserved. */
int32_t EXPORT(vk_commit)(int32_t n) {
  if (n < 0 || g_count + (uint32_t)n > g_cap) return -1;
  for (uint32_t i = g_count; i < g_count + (uint32_t)n; i++)
    g_scale[i] = quantize(g_rows + (uint64_t)i * g_dim, g_q + (uint64_t)i * g_qstride);
  g_count += (uint32_t)n;
  return (int32_t)g_count;
}

/* Overwrites row i with the row staged at the tail (written via vk_append_ptr(1), not
 * committed). Returns 0, or -1 when i is out of range or nothing was reserved. */
int32_t EXPORT(vk_set_row)(int32_t i) {
  if (i < 0 || (uint32_t)i >= g_count || g_count >= g_cap) return -1;
  float *dst = g_rows + (uint64_t)i * g_dim;
  __builtin_memmove(dst, g_rows + (uint64_t)g_count * g_dim, (__SIZE_TYPE__)g_dim * 4u);
  g_scale[i] = quantize(dst, g_q + (uint64_t)i * g_qstride);
  return 0;
}

/* Removes row i by moving the last row into its place. Returns the index the moved row had
 * (count-1 before the call), -1 when i was the last row (nothing moved), -2 when out of range. */
int32_t EXPORT(vk_remove)(int32_t i) {
  if (i < 0 || (uint32_t)i >= g_count) return -2;
  uint32_t last = g_count - 1;
  g_count = last;
  if ((uint32_t)i == last) return -1;
  __builtin_memmove(g_rows + (uint64_t)i * g_dim, g_rows + (uint64_t)last * g_dim,
                    (__SIZE_TYPE__)g_dim * 4u);
  __builtin_memmove(g_q + (uint64_t)i * g_qstride, g_q + (uint64_t)last * g_qstride,
                    (__SIZE_TYPE__)g_qstride);
  g_scale[i] = g_scale[last];
  return (int32_t)last;
}

/* Truncates to zero rows (capacity and memory are kept). */
void EXPORT(vk_clear)(void) { g_count = 0; }

/* ---- API: queries ------------------------------------------------------------------------ */

/* Lays out the scratch area for a query returning up to k results, with `cand` int8
 * candidates (0 for an exact scan) and a subset of n row indices (0 for all rows).
 * Returns 0, or -1 when out of memory. Then: write the query at vk_query_ptr(), the subset at
 * vk_subset_ptr(), call vk_search / vk_score_subset, read vk_out_*_ptr() and vk_stats_ptr(). */
int32_t EXPORT(vk_prepare)(int32_t k, int32_t cand, int32_t n) {
  if (g_dim == 0 || k < 0 || cand < 0 || n < 0) return -1;
  if ((uint32_t)k <= s_k && (uint32_t)cand <= s_cand && (uint32_t)n <= s_n &&
      g_scratch_end > g_scratch)
    return 0;
  uint32_t m = (uint32_t)(k > n ? k : n);
  uint32_t h = (uint32_t)(k > cand ? k : cand);
  uint64_t at = rows_end();
  uint64_t query = at;
  at = ALIGN16(at + (uint64_t)g_dim * 4u);
  uint64_t qquery = at;
  at = ALIGN16(at + g_qstride);
  uint64_t stats = at;
  at = ALIGN16(at + 4u * 8u);
  uint64_t out_idx = at;
  at = ALIGN16(at + (uint64_t)m * 4u);
  uint64_t out_score = at;
  at = ALIGN16(at + (uint64_t)m * 4u);
  uint64_t heap_score = at;
  at = ALIGN16(at + (uint64_t)h * 4u);
  uint64_t heap_idx = at;
  at = ALIGN16(at + (uint64_t)h * 4u);
  uint64_t subset = at;
  at = ALIGN16(at + (uint64_t)n * 4u);
  if (at >= 0xFFFF0000ull || ensure_memory((uint32_t)at) != 0) return -1;
  g_scratch = (uint32_t)query;
  g_scratch_end = (uint32_t)at;
  s_query = (float *)(uintptr_t)query;
  s_qquery = (int8_t *)(uintptr_t)qquery;
  s_stats = (double *)(uintptr_t)stats;
  s_out_idx = (int32_t *)(uintptr_t)out_idx;
  s_out_score = (float *)(uintptr_t)out_score;
  s_heap_score = (float *)(uintptr_t)heap_score;
  s_heap_idx = (int32_t *)(uintptr_t)heap_idx;
  s_subset = (int32_t *)(uintptr_t)subset;
  s_k = (uint32_t)k;
  s_cand = (uint32_t)cand;
  s_n = (uint32_t)n;
  return 0;
}

uint32_t EXPORT(vk_query_ptr)(void) { return (uint32_t)(uintptr_t)s_query; }
uint32_t EXPORT(vk_subset_ptr)(void) { return (uint32_t)(uintptr_t)s_subset; }
uint32_t EXPORT(vk_out_idx_ptr)(void) { return (uint32_t)(uintptr_t)s_out_idx; }
uint32_t EXPORT(vk_out_score_ptr)(void) { return (uint32_t)(uintptr_t)s_out_score; }
uint32_t EXPORT(vk_stats_ptr)(void) { return (uint32_t)(uintptr_t)s_stats; }

/* Top-k of the query at vk_query_ptr() over every row (n < 0) or over the first n indices at
 * vk_subset_ptr() (out-of-range indices are skipped). cand == 0: exact float32 scan; cand > 0:
 * int8 scan keeping `cand` candidates, then exact float32 rerank. Rows scoring below
 * `threshold` are not returned. Writes results best first to vk_out_idx_ptr() /
 * vk_out_score_ptr() and [sum, sum of squares, count, query scale] of the scanned scores to
 * vk_stats_ptr(). Returns the number of results, or -1 when vk_prepare was not called for
 * these sizes. */
int32_t EXPORT(vk_search)(int32_t k, int32_t cand, int32_t n, float threshold) {
  if (k < 0 || (uint32_t)k > s_k || cand < 0 || (uint32_t)cand > s_cand ||
      (n >= 0 && (uint32_t)n > s_n) || g_scratch_end == g_scratch)
    return -1;
  const float *q = s_query;
  const uint32_t dim = g_dim;
  const int subset = n >= 0;
  const uint32_t total = subset ? (uint32_t)n : g_count;
  double sum = 0.0, sumsq = 0.0, seen = 0.0;
  heap_t top = {s_heap_score, s_heap_idx, 0, (uint32_t)k};
  if (k == 0) {
    s_stats[0] = s_stats[1] = s_stats[2] = s_stats[3] = 0.0;
    return 0;
  }

  if (cand == 0) {
    for (uint32_t t = 0; t < total; t++) {
      uint32_t i = subset ? (uint32_t)s_subset[t] : t;
      if (i >= g_count) continue;
      float s = dot_f32(q, g_rows + (uint64_t)i * dim, dim);
      sum += s;
      sumsq += (double)s * s;
      seen += 1.0;
      if (s >= threshold) heap_offer(&top, s, (int32_t)i);
    }
    s_stats[3] = 1.0;
  } else {
    if (cand < k) cand = k;
    float qscale = quantize(q, s_qquery);
    heap_t pre = {s_heap_score, s_heap_idx, 0, (uint32_t)cand};
    for (uint32_t t = 0; t < total; t++) {
      uint32_t i = subset ? (uint32_t)s_subset[t] : t;
      if (i >= g_count) continue;
      float s = (float)dot_i8(s_qquery, g_q + (uint64_t)i * g_qstride, g_qstride) *
                (g_scale[i] * qscale);
      sum += s;
      sumsq += (double)s * s;
      seen += 1.0;
      heap_offer(&pre, s, (int32_t)i);
    }
    /* Exact rerank: the k-best heap grows over the prefix of the candidate arrays that was
     * already read (its size never exceeds the number of candidates consumed). */
    uint32_t got = pre.size;
    for (uint32_t c = 0; c < got; c++) {
      int32_t i = s_heap_idx[c];
      float s = dot_f32(q, g_rows + (uint64_t)i * dim, dim);
      if (s >= threshold) heap_offer(&top, s, i);
    }
    s_stats[3] = qscale;
  }
  s_stats[0] = sum;
  s_stats[1] = sumsq;
  s_stats[2] = seen;
  return (int32_t)heap_drain(&top, s_out_idx, s_out_score);
}

/* Exact scores of the query against the first n row indices at vk_subset_ptr(), written to
 * vk_out_score_ptr() in the same order (NaN for out-of-range indices). Returns n or -1. */
int32_t EXPORT(vk_score_subset)(int32_t n) {
  if (n < 0 || (uint32_t)n > s_n || g_scratch_end == g_scratch) return -1;
  for (uint32_t t = 0; t < (uint32_t)n; t++) {
    uint32_t i = (uint32_t)s_subset[t];
    s_out_score[t] = i < g_count ? dot_f32(s_query, g_rows + (uint64_t)i * g_dim, g_dim)
                                 : __builtin_nanf("");
  }
  return n;
}
