#include "kernels_cpu/binary/binary.h"

#include <algorithm>
#include <vector>

#include "kernels_cpu/common/cpu_isa.h"
#include "kernels_cpu/common/half_convert.h"

namespace edgegan::cpu {

namespace {

template <BinaryOp Op>
inline float apply(float a, float b) {
  if constexpr (Op == BinaryOp::kAdd) return a + b;
  else if constexpr (Op == BinaryOp::kSub) return a - b;
  else if constexpr (Op == BinaryOp::kMul) return a * b;
  else return a / b;
}

// dy * d(a op b)/d(operand Which).
template <BinaryOp Op, int Which>
inline float local_gradient(float g, float a, float b) {
  if constexpr (Op == BinaryOp::kAdd) return g;
  else if constexpr (Op == BinaryOp::kSub) return Which == 0 ? g : -g;
  else if constexpr (Op == BinaryOp::kMul) return Which == 0 ? g * b : g * a;
  else return Which == 0 ? g / b : -g * a / (b * b);
}

inline double local_gradient_double(BinaryOp op, int which, double g, double a, double b) {
  switch (op) {
    case BinaryOp::kAdd: return g;
    case BinaryOp::kSub: return which == 0 ? g : -g;
    case BinaryOp::kMul: return which == 0 ? g * b : g * a;
    case BinaryOp::kDiv: return which == 0 ? g / b : -g * a / (b * b);
  }
  return 0;
}

// Row-major strides of a full shape.
void strides_of(const int64_t* dims, int rank, int64_t* st) {
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; --k) {
    st[k] = s;
    s *= dims[k];
  }
}

// The shapes collapsed: output dimensions of size 1 dropped, neighbours that both
// operands read alike (both contiguous, or both broadcast) merged. Strides are each
// operand's own, 0 along a broadcast dimension.
struct Collapsed {
  int rank = 0;
  int64_t d[kBinaryMaxRank] = {};
  int64_t sa[kBinaryMaxRank] = {};
  int64_t sb[kBinaryMaxRank] = {};
  int64_t rows() const {
    int64_t r = 1;
    for (int k = 0; k + 1 < rank; ++k) r *= d[k];
    return r;
  }
  int64_t inner() const { return rank == 0 ? 1 : d[rank - 1]; }
  bool a_inner() const { return rank == 0 || sa[rank - 1] != 0; }
  bool b_inner() const { return rank == 0 || sb[rank - 1] != 0; }
  // Offsets of row `row`'s first element in a and b.
  void row_offsets(int64_t row, int64_t& oa, int64_t& ob) const {
    oa = ob = 0;
    for (int k = rank - 2; k >= 0; --k) {
      const int64_t i = row % d[k];
      row /= d[k];
      oa += i * sa[k];
      ob += i * sb[k];
    }
  }
};

Collapsed collapse(const BinaryShape& s) {
  int64_t sta[kBinaryMaxRank], stb[kBinaryMaxRank];
  strides_of(s.a, s.rank, sta);
  strides_of(s.b, s.rank, stb);
  // Innermost first, then reversed.
  int64_t d[kBinaryMaxRank], sa[kBinaryMaxRank], sb[kBinaryMaxRank];
  int n = 0;
  for (int k = s.rank - 1; k >= 0; --k) {
    if (s.out[k] == 1) continue;
    const int64_t ka = s.a[k] == 1 ? 0 : sta[k], kb = s.b[k] == 1 ? 0 : stb[k];
    if (n > 0 && ka == sa[n - 1] * d[n - 1] && kb == sb[n - 1] * d[n - 1]) {
      d[n - 1] *= s.out[k];  // the inner stride stays
      continue;
    }
    d[n] = s.out[k];
    sa[n] = ka;
    sb[n] = kb;
    ++n;
  }
  Collapsed c;
  c.rank = n;
  for (int k = 0; k < n; ++k) {
    c.d[k] = d[n - 1 - k];
    c.sa[k] = sa[n - 1 - k];
    c.sb[k] = sb[n - 1 - k];
  }
  return c;
}

template <BinaryOp Op>
void forward_row(const float* pa, bool a_full, const float* pb, bool b_full, float* y, int64_t n) {
  if (a_full && b_full) {
    for (int64_t i = 0; i < n; ++i) y[i] = apply<Op>(pa[i], pb[i]);
  } else if (a_full) {
    const float vb = pb[0];
    for (int64_t i = 0; i < n; ++i) y[i] = apply<Op>(pa[i], vb);
  } else {
    const float va = pa[0];
    for (int64_t i = 0; i < n; ++i) y[i] = apply<Op>(va, pb[i]);
  }
}

// Tasks of at least this many elements are worth a thread.
constexpr int64_t kMinParallelElements = 1 << 14;
constexpr int64_t kChunk = 4096;

// The forward passes' tasks: rows, and with one long row (the equal-shape add) or few
// rows, each row split into parts too.
struct ForwardTasks {
  int64_t rows, inner, parts = 1, tasks;
  bool parallel;
  ForwardTasks(const Collapsed& c, int threads) : rows(c.rows()), inner(c.inner()) {
    if (threads > 1 && rows < 4 * threads) parts = std::max<int64_t>(1, std::min((inner + kChunk - 1) / kChunk, (4 * threads + rows - 1) / rows));
    tasks = rows * parts;
    parallel = threads > 1 && rows * inner >= kMinParallelElements && tasks > 1;
  }
  int64_t row(int64_t t) const { return t / parts; }
  int64_t begin(int64_t t) const { return inner * (t % parts) / parts; }
  int64_t end(int64_t t) const { return inner * (t % parts + 1) / parts; }
};

template <BinaryOp Op>
void forward(const Collapsed& c, const float* a, const float* b, float* y, int threads) {
  const ForwardTasks k(c, threads);
  const int64_t inner = k.inner, tasks = k.tasks;
  const bool af = c.a_inner(), bf = c.b_inner();
#pragma omp parallel for schedule(static) num_threads(threads) if (k.parallel)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t row = k.row(t), begin = k.begin(t), end = k.end(t);
    int64_t oa, ob;
    c.row_offsets(row, oa, ob);
    forward_row<Op>(a + oa + (af ? begin : 0), af, b + ob + (bf ? begin : 0), bf, y + row * inner + begin, end - begin);
  }
}

// fp16 sessions: forward()'s tasks; each task's row part in blocks, each
// tensor operand widened into a float block, forward_row's arithmetic, the result narrowed.
constexpr int64_t kHalfBlock = 512;

const float* operand_block(const BinaryOperand& o, int64_t offset, int64_t n, float* block) {
  if (!o.half) return static_cast<const float*>(o.data) + offset;
  widen_halves(static_cast<const uint16_t*>(o.data) + offset, block, n);
  return block;
}

// Half arithmetic for a row of two half operands of the output's shape, or nullptr.
using HalfRowFn = bool (*)(BinaryOp op, const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n);
HalfRowFn half_row(BinaryOp op, const BinaryOperand& a, const BinaryOperand& b, bool af, bool bf) {
#if defined(EDGEGAN_HAVE_NEON_FP16_KERNELS)
  if (active_isa() == Isa::kNeonFp16Arith && op != BinaryOp::kDiv && a.half && b.half && af && bf) return binary_row_halves__neonfp16arith;
#endif
  (void)op, (void)a, (void)b, (void)af, (void)bf;
  return nullptr;
}

template <BinaryOp Op>
bool forward_halves(const Collapsed& c, const BinaryOperand& a, const BinaryOperand& b, uint16_t* y, int threads) {
  const ForwardTasks k(c, threads);
  const int64_t inner = k.inner, tasks = k.tasks;
  const bool af = c.a_inner(), bf = c.b_inner();
  bool overflow = false;
  if (const HalfRowFn fn = half_row(Op, a, b, af, bf)) {
#pragma omp parallel for schedule(static) num_threads(threads) if (k.parallel) reduction(|| : overflow)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t row = k.row(t), begin = k.begin(t), end = k.end(t);
      int64_t oa, ob;
      c.row_offsets(row, oa, ob);
      overflow = fn(Op, static_cast<const uint16_t*>(a.data) + oa + begin, static_cast<const uint16_t*>(b.data) + ob + begin, y + row * inner + begin,
                    end - begin) ||
                 overflow;
    }
    return overflow;
  }
#pragma omp parallel for schedule(static) num_threads(threads) if (k.parallel) reduction(|| : overflow)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t row = k.row(t), begin = k.begin(t), end = k.end(t);
    int64_t oa, ob;
    c.row_offsets(row, oa, ob);
    float block_a[kHalfBlock], block_b[kHalfBlock], out[kHalfBlock];
    for (int64_t i = begin; i < end; i += kHalfBlock) {
      const int64_t n = std::min(kHalfBlock, end - i);
      // Read whole before the block is written: y may be a or b (in place).
      const float* pa = operand_block(a, oa + (af ? i : 0), af ? n : 1, block_a);
      const float* pb = operand_block(b, ob + (bf ? i : 0), bf ? n : 1, block_b);
      forward_row<Op>(pa, af, pb, bf, out, n);
      overflow = narrow_to_halves(out, y + row * inner + i, n) || overflow;
    }
  }
  return overflow;
}

// The gradient of an operand that has the output's shape: element-wise.
template <BinaryOp Op, int Which>
void backward_row_full(const float* pa, bool a_full, const float* pb, bool b_full, const float* g, float* d, int64_t n, bool accumulate) {
  if (a_full && b_full) {
    if (accumulate) for (int64_t i = 0; i < n; ++i) d[i] += local_gradient<Op, Which>(g[i], pa[i], pb[i]);
    else for (int64_t i = 0; i < n; ++i) d[i] = local_gradient<Op, Which>(g[i], pa[i], pb[i]);
  } else if (a_full) {
    const float vb = pb[0];
    if (accumulate) for (int64_t i = 0; i < n; ++i) d[i] += local_gradient<Op, Which>(g[i], pa[i], vb);
    else for (int64_t i = 0; i < n; ++i) d[i] = local_gradient<Op, Which>(g[i], pa[i], vb);
  } else {
    const float va = pa[0];
    if (accumulate) for (int64_t i = 0; i < n; ++i) d[i] += local_gradient<Op, Which>(g[i], va, pb[i]);
    else for (int64_t i = 0; i < n; ++i) d[i] = local_gradient<Op, Which>(g[i], va, pb[i]);
  }
}

// The gradient of a broadcast operand, one output row added into it: an element per
// value (the operand runs along the row) or one sum (the operand is broadcast along it).
template <BinaryOp Op, int Which>
void backward_row_reduce(const float* pa, bool a_full, const float* pb, bool b_full, const float* g, float* d, bool d_full, int64_t n) {
  if (d_full) {  // the operand runs along the row: one value each
    backward_row_full<Op, Which>(pa, a_full, pb, b_full, g, d, n, true);
    return;
  }
  float sum = 0.f;  // broadcast along the row: one sum, in order
  if (a_full && b_full) {
    for (int64_t i = 0; i < n; ++i) sum += local_gradient<Op, Which>(g[i], pa[i], pb[i]);
  } else if (a_full) {
    const float vb = pb[0];
    for (int64_t i = 0; i < n; ++i) sum += local_gradient<Op, Which>(g[i], pa[i], vb);
  } else {
    const float va = pa[0];
    for (int64_t i = 0; i < n; ++i) sum += local_gradient<Op, Which>(g[i], va, pb[i]);
  }
  d[0] += sum;
}

template <BinaryOp Op, int Which>
void backward(const BinaryShape& s, const float* a, const float* b, const float* g, float* d, bool accumulate, int threads) {
  const Collapsed c = collapse(s);
  const int64_t rows = c.rows(), inner = c.inner();
  const bool af = c.a_inner(), bf = c.b_inner();
  const int64_t total = rows * inner;
  const int64_t* pdims = Which == 0 ? s.a : s.b;
  const int64_t numel = binary_elements(pdims, s.rank);
  if (numel == binary_elements(s.out, s.rank)) {
    // Not broadcast: element-wise, laid out as the output.
    int64_t parts = 1;
    if (threads > 1 && rows < 4 * threads) parts = std::max<int64_t>(1, std::min((inner + kChunk - 1) / kChunk, (4 * threads + rows - 1) / rows));
    const int64_t tasks = rows * parts;
    const bool parallel = threads > 1 && total >= kMinParallelElements && tasks > 1;
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t row = t / parts, part = t % parts;
      const int64_t begin = inner * part / parts, end = inner * (part + 1) / parts;
      int64_t oa, ob;
      c.row_offsets(row, oa, ob);
      backward_row_full<Op, Which>(a + oa + (af ? begin : 0), af, b + ob + (bf ? begin : 0), bf, g + row * inner + begin,
                                   d + row * inner + begin, end - begin, accumulate);
    }
    return;
  }
  if (!accumulate) std::fill(d, d + numel, 0.f);
  const int64_t* sp = Which == 0 ? c.sa : c.sb;
  const bool d_full = Which == 0 ? af : bf;
  // Rows grouped by the outermost collapsed dimension: where the operand runs along it
  // (a run-time tensor's batch), the groups write disjoint parts of d, each in a fixed
  // order, so they run in parallel and the sums do not depend on the thread count.
  const bool split = c.rank >= 2 && sp[0] != 0;
  const int64_t groups = split ? c.d[0] : 1;
  const int64_t rows_per_group = rows / groups;
  const bool parallel = threads > 1 && split && total >= kMinParallelElements;
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
  for (int64_t grp = 0; grp < groups; ++grp)
    for (int64_t row = grp * rows_per_group; row < (grp + 1) * rows_per_group; ++row) {
      int64_t oa, ob;
      c.row_offsets(row, oa, ob);
      backward_row_reduce<Op, Which>(a + oa, af, b + ob, bf, g + row * inner, d + (Which == 0 ? oa : ob), d_full, inner);
    }
}

template <typename F>
void for_each_index(const BinaryShape& s, F f) {
  int64_t sta[kBinaryMaxRank], stb[kBinaryMaxRank];
  strides_of(s.a, s.rank, sta);
  strides_of(s.b, s.rank, stb);
  const int64_t total = binary_elements(s.out, s.rank);
  int64_t idx[kBinaryMaxRank] = {};
  for (int64_t i = 0; i < total; ++i) {
    int64_t oa = 0, ob = 0;
    for (int k = 0; k < s.rank; ++k) {
      if (s.a[k] != 1) oa += idx[k] * sta[k];
      if (s.b[k] != 1) ob += idx[k] * stb[k];
    }
    f(i, oa, ob);
    for (int k = s.rank - 1; k >= 0; --k) {
      if (++idx[k] < s.out[k]) break;
      idx[k] = 0;
    }
  }
}

}  // namespace

void binary_reference(const BinaryShape& s, BinaryOp op, const float* a, const float* b, float* y) {
  for_each_index(s, [&](int64_t i, int64_t oa, int64_t ob) {
    const float x = a[oa], z = b[ob];
    switch (op) {
      case BinaryOp::kAdd: y[i] = x + z; break;
      case BinaryOp::kSub: y[i] = x - z; break;
      case BinaryOp::kMul: y[i] = x * z; break;
      case BinaryOp::kDiv: y[i] = x / z; break;
    }
  });
}

void binary(const BinaryShape& s, BinaryOp op, const float* a, const float* b, float* y, int threads) {
  const Collapsed c = collapse(s);
  switch (op) {
    case BinaryOp::kAdd: return forward<BinaryOp::kAdd>(c, a, b, y, threads);
    case BinaryOp::kSub: return forward<BinaryOp::kSub>(c, a, b, y, threads);
    case BinaryOp::kMul: return forward<BinaryOp::kMul>(c, a, b, y, threads);
    case BinaryOp::kDiv: return forward<BinaryOp::kDiv>(c, a, b, y, threads);
  }
}

bool binary_halves(const BinaryShape& s, BinaryOp op, const BinaryOperand& a, const BinaryOperand& b, uint16_t* y, int threads) {
  const Collapsed c = collapse(s);
  switch (op) {
    case BinaryOp::kAdd: return forward_halves<BinaryOp::kAdd>(c, a, b, y, threads);
    case BinaryOp::kSub: return forward_halves<BinaryOp::kSub>(c, a, b, y, threads);
    case BinaryOp::kMul: return forward_halves<BinaryOp::kMul>(c, a, b, y, threads);
    case BinaryOp::kDiv: return forward_halves<BinaryOp::kDiv>(c, a, b, y, threads);
  }
  return false;
}

void binary_backward_reference(const BinaryShape& s, BinaryOp op, int which, const float* a, const float* b, const float* dy, float* d) {
  std::vector<double> sum(static_cast<size_t>(binary_elements(which == 0 ? s.a : s.b, s.rank)), 0.0);
  for_each_index(s, [&](int64_t i, int64_t oa, int64_t ob) {
    sum[static_cast<size_t>(which == 0 ? oa : ob)] += local_gradient_double(op, which, dy[i], a[oa], b[ob]);
  });
  for (size_t k = 0; k < sum.size(); ++k) d[k] = static_cast<float>(sum[k]);
}

void binary_backward(const BinaryShape& s, BinaryOp op, int which, const float* a, const float* b, const float* dy, float* d, bool accumulate,
                     int threads) {
#define EDGEGAN_BINARY_BACKWARD(OP)                                    \
  return which == 0 ? backward<OP, 0>(s, a, b, dy, d, accumulate, threads) \
                    : backward<OP, 1>(s, a, b, dy, d, accumulate, threads)
  switch (op) {
    case BinaryOp::kAdd: EDGEGAN_BINARY_BACKWARD(BinaryOp::kAdd);
    case BinaryOp::kSub: EDGEGAN_BINARY_BACKWARD(BinaryOp::kSub);
    case BinaryOp::kMul: EDGEGAN_BINARY_BACKWARD(BinaryOp::kMul);
    case BinaryOp::kDiv: EDGEGAN_BINARY_BACKWARD(BinaryOp::kDiv);
  }
#undef EDGEGAN_BINARY_BACKWARD
}

}  // namespace edgegan::cpu
