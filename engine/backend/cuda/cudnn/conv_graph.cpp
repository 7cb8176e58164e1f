#include "engine/backend/cuda/cudnn/conv_graph.h"

#include <cudnn_frontend.h>

#include <unordered_map>
#include <vector>

namespace edgegan::cuda::cudnn {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

struct ConvGraph::Impl {
  ConvGraphSpec spec;
  fe::graph::Graph graph;
  TensorPtr x, w, bias, slope, residual, y;
  TensorPtr conv;  // the convolution's own (virtual) output
  std::string error;
  bool valid = false;
  std::vector<int64_t> built;  // indices of the plans that built
};

namespace {

fe::DataType_t io_type(Precision p) { return p == Precision::kFp16 ? fe::DataType_t::HALF : fe::DataType_t::FLOAT; }

// A per-channel float vector [1, C, 1, 1] (bias, PRelu slopes).
TensorPtr channel_vector(fe::graph::Graph& g, const char* name, int64_t channels) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_dim({1, channels, 1, 1})
                      .set_stride({channels, 1, channels, channels})
                      .set_data_type(fe::DataType_t::FLOAT));
}

TensorPtr scalar(fe::graph::Graph& g, float v) { return g.tensor(v, fe::graph::ScalarType::COMPILE_TIME_CONST); }

TensorPtr unary(fe::graph::Graph& g, TensorPtr in, fe::PointwiseMode_t mode) {
  return g.pointwise(in, fe::graph::Pointwise_attributes().set_mode(mode).set_compute_data_type(fe::DataType_t::FLOAT));
}
TensorPtr binary(fe::graph::Graph& g, TensorPtr a, TensorPtr b, fe::PointwiseMode_t mode) {
  return g.pointwise(a, b, fe::graph::Pointwise_attributes().set_mode(mode).set_compute_data_type(fe::DataType_t::FLOAT));
}

// The activation as pointwise nodes, with the CPU kernels' formulas
// (kernels_cpu/activation/activation.h).
TensorPtr activation(ConvGraph::Impl& s, TensorPtr v) {
  auto& g = s.graph;
  const ConvGraphSpec& c = s.spec;
  using M = fe::PointwiseMode_t;
  switch (c.activation) {
    case Pointwise::kNone: return v;
    case Pointwise::kRelu: return unary(g, v, M::RELU_FWD);
    case Pointwise::kLeakyRelu:
      return g.pointwise(v, fe::graph::Pointwise_attributes().set_mode(M::RELU_FWD).set_relu_lower_clip_slope(c.alpha).set_compute_data_type(
                                fe::DataType_t::FLOAT));
    case Pointwise::kTanh: return unary(g, v, M::TANH_FWD);
    case Pointwise::kSigmoid: return unary(g, v, M::SIGMOID_FWD);
    case Pointwise::kElu:
      return g.pointwise(v, fe::graph::Pointwise_attributes().set_mode(M::ELU_FWD).set_elu_alpha(c.alpha).set_compute_data_type(fe::DataType_t::FLOAT));
    case Pointwise::kSelu: {  // beta * elu(v, alpha)
      auto e = g.pointwise(v, fe::graph::Pointwise_attributes().set_mode(M::ELU_FWD).set_elu_alpha(c.alpha).set_compute_data_type(fe::DataType_t::FLOAT));
      return binary(g, e, scalar(g, c.beta), M::MUL);
    }
    case Pointwise::kClip: return binary(g, binary(g, v, scalar(g, c.alpha), M::MAX), scalar(g, c.beta), M::MIN);
    case Pointwise::kHardSigmoid: {  // min(1, max(0, alpha v + beta))
      auto a = binary(g, binary(g, v, scalar(g, c.alpha), M::MUL), scalar(g, c.beta), M::ADD);
      return binary(g, binary(g, a, scalar(g, 0.f), M::MAX), scalar(g, 1.f), M::MIN);
    }
    case Pointwise::kHardSwish: {  // v * min(1, max(0, v/6 + 1/2))
      auto a = binary(g, binary(g, v, scalar(g, 1.f / 6.f), M::MUL), scalar(g, 0.5f), M::ADD);
      return binary(g, v, binary(g, binary(g, a, scalar(g, 0.f), M::MAX), scalar(g, 1.f), M::MIN), M::MUL);
    }
    case Pointwise::kSoftplus:
      return g.pointwise(v, fe::graph::Pointwise_attributes().set_mode(M::SOFTPLUS_FWD).set_softplus_beta(1.f).set_compute_data_type(fe::DataType_t::FLOAT));
    case Pointwise::kMish: {  // v * tanh(softplus(v))
      auto sp = g.pointwise(v, fe::graph::Pointwise_attributes().set_mode(M::SOFTPLUS_FWD).set_softplus_beta(1.f).set_compute_data_type(fe::DataType_t::FLOAT));
      return binary(g, v, unary(g, sp, M::TANH_FWD), M::MUL);
    }
    case Pointwise::kPRelu: {  // v > 0 ? v : slope[c] * v
      s.slope = channel_vector(g, "slope", c.out_channels_padded);
      auto scaled = binary(g, v, s.slope, M::MUL);
      auto positive = binary(g, v, scalar(g, 0.f), M::CMP_GT);
      return g.pointwise(v, scaled, positive, fe::graph::Pointwise_attributes().set_mode(M::BINARY_SELECT).set_compute_data_type(fe::DataType_t::FLOAT));
    }
  }
  return v;
}

void build(ConvGraph::Impl& s) {
  const ConvGraphSpec& c = s.spec;
  auto& g = s.graph;
  g.set_io_data_type(io_type(c.precision)).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
  const int64_t ci = c.in_channels_padded, co = c.out_channels_padded;
  // NHWC through strides: dims are N, C, H, W as cuDNN names them.
  s.x = g.tensor(fe::graph::Tensor_attributes()
                     .set_name("x")
                     .set_dim({c.batch, ci, c.in_h, c.in_w})
                     .set_stride({c.in_image_pixels * ci, 1, c.in_row_pixels * ci, ci}));
  s.w = g.tensor(fe::graph::Tensor_attributes()
                     .set_name("w")
                     .set_dim({co, ci, c.kernel_h, c.kernel_w})
                     .set_stride({c.kernel_h * c.kernel_w * ci, 1, c.kernel_w * ci, ci}));
  auto conv = fe::graph::Conv_fprop_attributes()
                  .set_name("conv")
                  .set_pre_padding({c.pad_top, c.pad_left})
                  .set_post_padding({c.pad_bottom, c.pad_right})
                  .set_stride({c.stride_h, c.stride_w})
                  .set_dilation({c.dilation_h, c.dilation_w})
                  .set_compute_data_type(fe::DataType_t::FLOAT);
  TensorPtr v = g.conv_fprop(s.x, s.w, conv);
  s.conv = v;
  if (c.bias) {
    s.bias = channel_vector(g, "bias", co);
    v = binary(g, v, s.bias, fe::PointwiseMode_t::ADD);
  }
  v = activation(s, v);
  const std::vector<int64_t> out_dim = {c.batch, co, c.out_h, c.out_w};
  const std::vector<int64_t> out_stride = {c.out_image_pixels * co, 1, c.out_row_step * c.out_row_pixels * co, c.out_col_step * co};
  if (c.residual) {
    s.residual = g.tensor(fe::graph::Tensor_attributes().set_name("residual").set_dim(out_dim).set_stride(out_stride));
    v = binary(g, v, s.residual, fe::PointwiseMode_t::ADD);
  }
  v->set_output(true).set_name("y").set_dim(out_dim).set_stride(out_stride).set_data_type(io_type(c.precision));
  s.y = v;
}

}  // namespace

CudnnHandle::CudnnHandle() {
  cudnnHandle_t h = nullptr;
  try {
    const cudnnStatus_t status = fe::detail::create_handle(&h);
    if (status != CUDNN_STATUS_SUCCESS) error_ = std::string("cudnnCreate: ") + fe::detail::get_error_string(status);
    else handle_ = h;
  } catch (const std::exception& e) {
    error_ = std::string("cudnnCreate: ") + e.what();
  }
}

CudnnHandle::~CudnnHandle() {
  if (handle_) fe::detail::destroy_handle(static_cast<cudnnHandle_t>(handle_));
}

bool CudnnHandle::set_stream(void* stream) {
  return handle_ && fe::detail::set_stream(static_cast<cudnnHandle_t>(handle_), static_cast<cudaStream_t>(stream)) == CUDNN_STATUS_SUCCESS;
}

ConvGraph::ConvGraph(const ConvGraphSpec& spec) : impl_(std::make_unique<Impl>()) {
  impl_->spec = spec;
  try {
    build(*impl_);
    auto status = impl_->graph.validate();
    impl_->valid = status.is_good();
    if (!impl_->valid) impl_->error = status.get_message();
    // validate() infers the convolution's output from its input, filter, pads and
    // strides but does not hold the graph's stated output to it: that check is here.
    const std::vector<int64_t> want = {spec.batch, spec.out_channels_padded, spec.out_h, spec.out_w};
    if (impl_->valid && impl_->conv->get_dim() != want) {
      impl_->valid = false;
      const auto& d = impl_->conv->get_dim();
      impl_->error = "the convolution gives " + (d.size() == 4 ? std::to_string(d[2]) + "x" + std::to_string(d[3]) : std::string("?")) +
                     " outputs, the graph states " + std::to_string(spec.out_h) + "x" + std::to_string(spec.out_w);
    }
  } catch (const std::exception& e) {
    impl_->error = e.what();
  }
}

ConvGraph::~ConvGraph() = default;

bool ConvGraph::valid() const { return impl_->valid; }
const std::string& ConvGraph::error() const { return impl_->error; }

int ConvGraph::build_plans(void* handle) {
  Impl& s = *impl_;
  s.built.clear();
  if (!s.valid) return 0;
  auto h = static_cast<cudnnHandle_t>(handle);
  if (s.graph.build_operation_graph(h).is_bad()) return 0;
  if (s.graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}).is_bad()) return 0;
  // Deterministic runs only (a run is bit-identical to the last); FP32 keeps FP32 products.
  s.graph.deselect_numeric_notes({fe::NumericalNote_t::NONDETERMINISTIC});
  if (s.spec.precision == Precision::kFp32) s.graph.deselect_numeric_notes({fe::NumericalNote_t::DOWN_CONVERT_INPUTS});
  if (s.graph.check_support().is_bad()) return 0;
  const int64_t count = s.graph.get_execution_plan_count();
  for (int64_t i = 0; i < count; ++i)
    if (s.graph.build_plan_at_index(i).is_good()) s.built.push_back(i);
  return static_cast<int>(s.built.size());
}

int ConvGraph::plan_count() const { return static_cast<int>(impl_->built.size()); }

std::string ConvGraph::plan_name(int plan) const {
  std::string name;
  if (impl_->graph.get_plan_name_at_index(impl_->built[static_cast<size_t>(plan)], name).is_bad()) return "cudnn";
  return name;
}

int64_t ConvGraph::workspace_bytes(int plan) const {
  int64_t bytes = 0;
  if (impl_->graph.get_workspace_size_plan_at_index(impl_->built[static_cast<size_t>(plan)], bytes).is_bad()) return -1;
  return bytes;
}

bool ConvGraph::execute(void* handle, int plan, const ConvGraphPointers& p, void* workspace, std::string* why) const {
  const Impl& s = *impl_;
  std::unordered_map<int64_t, void*> pointers = {{s.x->get_uid(), const_cast<void*>(p.x)},
                                                 {s.w->get_uid(), const_cast<void*>(p.filter)},
                                                 {s.y->get_uid(), p.y}};
  if (s.bias) pointers[s.bias->get_uid()] = const_cast<void*>(p.bias);
  if (s.slope) pointers[s.slope->get_uid()] = const_cast<void*>(p.slope);
  if (s.residual) pointers[s.residual->get_uid()] = const_cast<void*>(p.residual);
  auto status =
      s.graph.execute_plan_at_index(static_cast<cudnnHandle_t>(handle), pointers, workspace, s.built[static_cast<size_t>(plan)]);
  if (status.is_bad() && why) *why = status.get_message();
  return status.is_good();
}

}  // namespace edgegan::cuda::cudnn
