/* Omoide BM25F scorer: accumulates BM25F over array postings and selects the best k, in
 * WebAssembly (built into the same modules as topk.c by buildtools/kernel.py; a scorer is its
 * own instance, so this file's memory never meets a vector store's).
 *
 * The postings layout is the engine's (py/omoide/engine/bm25.py): per query term, int32
 * triples (ordinal, tf_text, tf_context) in ascending ordinal order, both tfs 0 for a removed
 * document; each document's |text| and |context| are in two per-ordinal tables. The caller
 * copies the query terms' postings in one block, with each term's start (offsets) and idf,
 * keeps the length tables up to date at bm_lengths_ptr() (they stay between calls until a
 * bm_prepare moves them: the pointer changes), and calls bm_top or bm_at with the
 * formula's constants (engine Query.constants(): k1, then per field base = 1 - b and
 * slope = b / average length, and the context's weight). The formula and its evaluation
 * order are those of PureScorer, so both produce the same doubles:
 *
 *   x = 0;  if (tf_text > 0) x = tf_text / (text_base + text_slope * |text|);
 *   if (tf_context > 0) x += weight * tf_context / (context_base + context_slope * |context|);
 *   if (x > 0) score += idf * x * (k1 + 1) / (x + k1)
 *
 * summed per document in the order of the query terms.
 *
 * Memory, from __heap_base:
 *   [ acc: cap doubles ][ mask: cap bytes ]   per ordinal, all zero between calls
 *   [ lengths: cap int32 ][ context lengths: cap int32 ]   per ordinal, the caller's
 *   [ idf: terms doubles ][ offsets: terms+1 int32 ][ postings: words int32 ]
 *   [ subset: n int32 ][ touched: words/5 int32 ][ heap: k doubles ]
 *   [ out ordinals: max(words/5, n) int32 ][ out scores: as many doubles ][ stats: 2 doubles ]
 * acc and mask are returned to zero by every call (only the entries it touched), so a query
 * costs its postings, not the number of documents.
 */

#include <stdint.h>

#define EXPORT(name) __attribute__((export_name(#name))) name
#define BM_PAGE 65536u
#define BM_ALIGN16(x) (((x) + 15u) & ~15ull)
#define BM_STRIDE 3u  /* int32 per posting */

extern unsigned char __heap_base;

static uint32_t b_cap;        /* ordinals acc and mask can hold */
static double *b_acc;
static uint8_t *b_mask;
static int32_t *b_len;        /* ordinal -> |text| */
static int32_t *b_context_len; /* ordinal -> |context| */
static double *b_idf;
static int32_t *b_offsets;
static int32_t *b_postings;
static int32_t *b_subset;
static int32_t *b_touched;
static double *b_heap;
static int32_t *b_out_ord;
static double *b_out_score;
static double *b_stats;       /* [sum of matched scores, sum of their squares] */
static uint32_t b_terms, b_words, b_n, b_k, b_laid;

static int bm_ensure(uint64_t end) {
  if (end >= 0xFFFF0000ull) return -1;
  uint32_t have = (uint32_t)__builtin_wasm_memory_size(0);
  uint32_t need = (uint32_t)((end + BM_PAGE - 1) / BM_PAGE);
  if (need <= have) return 0;
  if (__builtin_wasm_memory_grow(0, need - have) == (__SIZE_TYPE__)-1) return -1;
  return 0;
}

/* Lays out memory for a query of `terms` terms, `words` int32 of postings, ordinals below
 * `ordinals`, a subset of n ordinals and up to k results. 0, or -1 when out of memory. */
int32_t EXPORT(bm_prepare)(int32_t terms, int32_t words, int32_t ordinals, int32_t n, int32_t k) {
  if (terms < 0 || words < 0 || ordinals < 0 || n < 0 || k < 0) return -1;
  if (b_laid && (uint32_t)ordinals <= b_cap && (uint32_t)terms <= b_terms &&
      (uint32_t)words <= b_words && (uint32_t)n <= b_n && (uint32_t)k <= b_k)
    return 0;
  uint32_t cap = b_cap;
  if ((uint32_t)ordinals > cap) {
    cap = cap < 1024u ? 1024u : cap;
    while (cap < (uint32_t)ordinals) cap = cap < 65536u ? cap * 2u : cap + cap / 4u;
  }
  /* grow every size with slack so that a slightly larger query does not lay out again */
  uint32_t t = (uint32_t)terms > b_terms ? (uint32_t)terms + 8u : b_terms;
  uint32_t w = (uint32_t)words > b_words ? (uint32_t)words + (uint32_t)words / 2u + 48u : b_words;
  uint32_t m = (uint32_t)n > b_n ? (uint32_t)n + 64u : b_n;
  uint32_t h = (uint32_t)k > b_k ? (uint32_t)k + 16u : b_k;
  uint64_t at = BM_ALIGN16((uint64_t)(uintptr_t)&__heap_base);
  uint64_t acc = at;
  at = BM_ALIGN16(at + (uint64_t)cap * 8u);
  uint64_t mask = at;
  at = BM_ALIGN16(at + cap);
  uint64_t lengths = at;  /* moves only when cap does: the caller then copies them again */
  at = BM_ALIGN16(at + (uint64_t)cap * 8u);
  uint64_t idf = at;
  at = BM_ALIGN16(at + (uint64_t)t * 8u);
  uint64_t offsets = at;
  at = BM_ALIGN16(at + ((uint64_t)t + 1u) * 4u);
  uint64_t postings = at;
  at = BM_ALIGN16(at + (uint64_t)w * 4u);
  uint64_t subset = at;
  at = BM_ALIGN16(at + (uint64_t)m * 4u);
  uint64_t touched = at;
  at = BM_ALIGN16(at + (uint64_t)(w / BM_STRIDE + 1u) * 4u);
  uint64_t heap = at;
  at = BM_ALIGN16(at + (uint64_t)h * 8u);
  uint64_t outs = w / BM_STRIDE + 1u > m ? w / BM_STRIDE + 1u : m;  /* bm_top: <= touched; bm_at: n */
  uint64_t out_ord = at;
  at = BM_ALIGN16(at + outs * 4u);
  uint64_t out_score = at;
  at = BM_ALIGN16(at + outs * 8u);
  uint64_t stats = at;
  at = BM_ALIGN16(at + 16u);
  if (bm_ensure(at) != 0) return -1;
  if (cap != b_cap || !b_laid) {  /* acc and mask start at zero (the old ones were zero too) */
    __builtin_memset((void *)(uintptr_t)acc, 0, (__SIZE_TYPE__)(mask - acc) + cap);
  }
  b_acc = (double *)(uintptr_t)acc;
  b_mask = (uint8_t *)(uintptr_t)mask;
  b_len = (int32_t *)(uintptr_t)lengths;
  b_context_len = b_len + cap;
  b_idf = (double *)(uintptr_t)idf;
  b_offsets = (int32_t *)(uintptr_t)offsets;
  b_postings = (int32_t *)(uintptr_t)postings;
  b_subset = (int32_t *)(uintptr_t)subset;
  b_touched = (int32_t *)(uintptr_t)touched;
  b_heap = (double *)(uintptr_t)heap;
  b_out_ord = (int32_t *)(uintptr_t)out_ord;
  b_out_score = (double *)(uintptr_t)out_score;
  b_stats = (double *)(uintptr_t)stats;
  b_cap = cap;
  b_terms = t;
  b_words = w;
  b_n = m;
  b_k = h;
  b_laid = 1;
  return 0;
}

/* the two length tables: cap int32 of |text|, then cap int32 of |context| */
uint32_t EXPORT(bm_lengths_ptr)(void) { return (uint32_t)(uintptr_t)b_len; }
uint32_t EXPORT(bm_cap)(void) { return b_cap; }
uint32_t EXPORT(bm_idf_ptr)(void) { return (uint32_t)(uintptr_t)b_idf; }
uint32_t EXPORT(bm_offsets_ptr)(void) { return (uint32_t)(uintptr_t)b_offsets; }
uint32_t EXPORT(bm_postings_ptr)(void) { return (uint32_t)(uintptr_t)b_postings; }
uint32_t EXPORT(bm_subset_ptr)(void) { return (uint32_t)(uintptr_t)b_subset; }
uint32_t EXPORT(bm_out_ord_ptr)(void) { return (uint32_t)(uintptr_t)b_out_ord; }
uint32_t EXPORT(bm_out_score_ptr)(void) { return (uint32_t)(uintptr_t)b_out_score; }
uint32_t EXPORT(bm_stats_ptr)(void) { return (uint32_t)(uintptr_t)b_stats; }

/* Adds every live posting of the query (restricted to the mask when `masked`) into acc;
 * returns how many ordinals it touched first (listed in b_touched, in order of first touch). */
static uint32_t accumulate(uint32_t terms, uint32_t ordinals, int masked, double k1,
                           double text_base, double text_slope, double weight,
                           double context_base, double context_slope) {
  uint32_t touched = 0;
  const double k1_plus_1 = k1 + 1.0;
  for (uint32_t t = 0; t < terms; t++) {
    const double idf = b_idf[t];
    const int32_t end = b_offsets[t + 1];
    for (int32_t p = b_offsets[t]; p >= 0 && p + 2 < end; p += (int32_t)BM_STRIDE) {
      const uint32_t o = (uint32_t)b_postings[p];
      const int32_t tf = b_postings[p + 1];
      const int32_t context_tf = b_postings[p + 2];
      if ((tf <= 0 && context_tf <= 0) || o >= ordinals || (masked && !b_mask[o])) continue;
      double x = 0.0;
      if (tf > 0) x = (double)tf / (text_base + text_slope * (double)b_len[o]);
      if (context_tf > 0)
        x += weight * (double)context_tf /
             (context_base + context_slope * (double)b_context_len[o]);
      if (!(x > 0.0)) continue;
      const double s = idf * x * k1_plus_1 / (x + k1);
      if (b_acc[o] == 0.0) b_touched[touched++] = (int32_t)o;
      b_acc[o] += s;
    }
  }
  return touched;
}

static void set_mask(uint32_t n, uint32_t ordinals, uint8_t value) {
  for (uint32_t i = 0; i < n; i++) {
    uint32_t o = (uint32_t)b_subset[i];
    if (o < ordinals) b_mask[o] = value;
  }
}

/* min-heap of doubles: the root is the k-th best score seen */
static void heap_push(uint32_t *size, uint32_t k, double s) {
  double *h = b_heap;
  if (*size < k) {
    uint32_t i = (*size)++;
    while (i > 0) {
      uint32_t parent = (i - 1) / 2;
      if (h[parent] <= s) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = s;
  } else if (s > h[0]) {
    uint32_t i = 0;
    for (;;) {
      uint32_t c = 2 * i + 1;
      if (c >= *size) break;
      if (c + 1 < *size && h[c + 1] < h[c]) c++;
      if (h[c] >= s) break;
      h[i] = h[c];
      i = c;
    }
    h[i] = s;
  }
}

/* The best k matched documents of the query: writes to the out arrays every matched ordinal
 * scoring at least the k-th best score (ties at the k-th place included, in order of first
 * touch) and [sum, sum of squares] of all matched scores to the stats; n >= 0 restricts the
 * documents to the first n ordinals at bm_subset_ptr(). Returns how many were written, or -1
 * when bm_prepare was not called for these sizes. */
int32_t EXPORT(bm_top)(int32_t terms, int32_t ordinals, int32_t n, int32_t k, double k1,
                       double text_base, double text_slope, double weight,
                       double context_base, double context_slope) {
  if (!b_laid || terms < 0 || (uint32_t)terms > b_terms || ordinals < 0 ||
      (uint32_t)ordinals > b_cap || (n >= 0 && (uint32_t)n > b_n) || k < 0 ||
      (uint32_t)k > b_k || b_offsets[terms] < 0 || (uint32_t)b_offsets[terms] > b_words)
    return -1;
  const int masked = n >= 0;
  if (masked) set_mask((uint32_t)n, (uint32_t)ordinals, 1);
  uint32_t touched = accumulate((uint32_t)terms, (uint32_t)ordinals, masked, k1, text_base,
                                text_slope, weight, context_base, context_slope);
  double sum = 0.0, sumsq = 0.0;
  uint32_t size = 0;
  for (uint32_t i = 0; i < touched; i++) {
    double s = b_acc[b_touched[i]];
    sum += s;
    sumsq += s * s;
    if (k > 0) heap_push(&size, (uint32_t)k, s);
  }
  uint32_t out = 0;
  if (k > 0) {
    double floor = size < (uint32_t)k ? 0.0 : b_heap[0];
    for (uint32_t i = 0; i < touched; i++) {
      int32_t o = b_touched[i];
      if (b_acc[o] >= floor) {
        b_out_ord[out] = o;
        b_out_score[out] = b_acc[o];
        out++;
      }
    }
  }
  for (uint32_t i = 0; i < touched; i++) b_acc[b_touched[i]] = 0.0;
  if (masked) set_mask((uint32_t)n, (uint32_t)ordinals, 0);
  b_stats[0] = sum;
  b_stats[1] = sumsq;
  return (int32_t)out;
}

/* The score of each of the first n ordinals at bm_subset_ptr(), in their order, written to
 * the out scores (0 when unmatched or out of range). Returns n, or -1 as bm_top. */
int32_t EXPORT(bm_at)(int32_t terms, int32_t ordinals, int32_t n, double k1,
                      double text_base, double text_slope, double weight,
                      double context_base, double context_slope) {
  if (!b_laid || terms < 0 || (uint32_t)terms > b_terms || ordinals < 0 ||
      (uint32_t)ordinals > b_cap || n < 0 || (uint32_t)n > b_n || b_offsets[terms] < 0 ||
      (uint32_t)b_offsets[terms] > b_words)
    return -1;
  set_mask((uint32_t)n, (uint32_t)ordinals, 1);
  uint32_t touched = accumulate((uint32_t)terms, (uint32_t)ordinals, 1, k1, text_base,
                                text_slope, weight, context_base, context_slope);
  for (uint32_t i = 0; i < (uint32_t)n; i++) {
    uint32_t o = (uint32_t)b_subset[i];
    b_out_score[i] = o < (uint32_t)ordinals ? b_acc[o] : 0.0;
  }
  for (uint32_t i = 0; i < touched; i++) b_acc[b_touched[i]] = 0.0;
  set_mask((uint32_t)n, (uint32_t)ordinals, 0);
  return n;
}
