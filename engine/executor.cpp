#include "engine/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "engine/ops/half_route.h"
#include "kernels_cpu/common/half_convert.h"

namespace edgegan {

Executor::Executor(const Model::Impl& model, const ComputeBackend& backend, SessionPlan plan, MemoryTracker& tracker, int threads)
    : m_(model), backend_(backend), stream_(backend.open_stream()), plan_(std::move(plan)), batch_(plan_.batch), threads_(threads) {
  arena_ = backend_.allocate(plan_.arena_bytes, tracker);
  // Staging for the largest single copy in or out.
  uint64_t largest_copy = 0;
  for (int t : m_.input_tensors) largest_copy = std::max(largest_copy, tensor_bytes(t));
  for (int t : m_.output_tensors) largest_copy = std::max(largest_copy, tensor_bytes(t));
  stream_->reserve_staging(largest_copy);
  if (plan_.precision == Precision::kFp16) {
    uint64_t largest_floats = 0;
    for (int t : m_.input_tensors) largest_floats = std::max(largest_floats, stored_as_halves(t) ? elements(t) : 0);
    for (int t : m_.output_tensors) largest_floats = std::max(largest_floats, stored_as_halves(t) ? elements(t) : 0);
    halves_.resize(largest_floats);
  }
  values_.resize(plan_.tensor_buffer.size());
  for (size_t t = 0; t < values_.size(); ++t) values_[t] = address(plan_.tensor_buffer[t]);
  gradients_.assign(values_.size(), nullptr);
  for (size_t t = 0; t < plan_.gradient_buffer.size(); ++t) gradients_[t] = address(plan_.gradient_buffer[t]);
  want_input_.resize(plan_.kernels.size());
  for (size_t i = 0; i < plan_.kernels.size(); ++i) want_input_[i].assign(plan_.op_inputs[i].size(), 1);
}

uint64_t Executor::tensor_bytes(int t) const { return edgegan::tensor_bytes(m_, plan_, t); }

uint64_t Executor::elements(int t) const { return static_cast<uint64_t>(batch_) * static_cast<uint64_t>(m_.tensors[static_cast<size_t>(t)].per_sample); }

bool Executor::stored_as_halves(int t) const { return edgegan::stored_as_halves(m_, plan_, t); }

void Executor::write_inputs(const std::vector<const Tensor*>& bound) {
  for (size_t i = 0; i < m_.inputs.size(); ++i) {
    const Tensor& given = *bound[i];
    const int t = m_.input_tensors[i];
    const void* src = given.dtype == DType::kInt64 ? static_cast<const void*>(given.i64.data()) : static_cast<const void*>(given.f32.data());
    if (stored_as_halves(t)) {
      // Rounded on the host by the CPU's converters (F16C, NEON or scalar: the same bits);
      // an input past the half range is not an overflow error (docs/cpu-precision.md).
      cpu::narrow_to_halves(given.f32.data(), halves_.data(), static_cast<int64_t>(elements(t)));
      src = halves_.data();
    }
    stream_->copy_to_device(values_[static_cast<size_t>(t)], src, tensor_bytes(t));
  }
}

void Executor::forward(std::vector<OpTiming>* timings, const ForwardHooks* hooks) {
  RunContext ctx;
  ctx.tensors = &values_;
  ctx.batch = batch_;
  ctx.threads = threads_;
  ctx.stream = stream_->native();
  const size_t stop = hooks ? std::min(hooks->stop, plan_.kernels.size()) : plan_.kernels.size();
  auto kernel = [&](size_t i) -> OpKernel& {
    OpKernel* substitute = hooks && hooks->substitutes && i < hooks->substitutes->size() ? (*hooks->substitutes)[i] : nullptr;
    return substitute ? *substitute : *plan_.kernels[i];
  };
  if (!timings && !hooks) {
    stream_->run_recorded([&] {
      for (size_t i = 0; i < plan_.kernels.size(); ++i) {
        ctx.workspace = address(plan_.workspace_buffer[i]);
        plan_.kernels[i]->run(ctx);
      }
    });
  } else {
    if (timings) timings->assign(stop, OpTiming{});
    const auto& ops = *m_.root->ops();
    for (size_t i = 0; i < stop; ++i) {
      if (hooks && hooks->before) {
        stream_->synchronize();
        hooks->before(i);
      }
      ctx.workspace = address(plan_.workspace_buffer[i]);
      const auto start = std::chrono::steady_clock::now();
      kernel(i).run(ctx);
      if (!timings) continue;
      stream_->synchronize();
      OpTiming& t = (*timings)[i];
      t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const auto* op = ops.Get(static_cast<uint32_t>(i));
      t.name = op->name() ? op->name()->str() : "op " + std::to_string(i);
      t.kernel = kernel(i).kernel_name();
      t.macs = kernel(i).macs();
    }
  }
  stream_->synchronize();
  for (size_t i = 0; i < stop; ++i) {
    try {
      kernel(i).check_run();
    } catch (HalfOverflowError& e) {
      e.tensor = plan_.op_output[i];  // the first layer past the half range, in graph order
      throw;
    }
  }
}

void Executor::read_tensor(int t, float* host) const {
  if (!stored_as_halves(t)) return stream_->copy_to_host(host, values_[static_cast<size_t>(t)], tensor_bytes(t));
  std::vector<uint16_t> halves(elements(t));
  stream_->copy_to_host(halves.data(), values_[static_cast<size_t>(t)], tensor_bytes(t));
  cpu::widen_halves(halves.data(), host, static_cast<int64_t>(elements(t)));
}

uint64_t Executor::output_floats(size_t i) const { return elements(m_.output_tensors[i]); }

void Executor::read_output(size_t i, float* host) const {
  const int t = m_.output_tensors[i];
  if (!stored_as_halves(t)) return stream_->copy_to_host(host, values_[static_cast<size_t>(t)], tensor_bytes(t));
  stream_->copy_to_host(halves_.data(), values_[static_cast<size_t>(t)], tensor_bytes(t));
  cpu::widen_halves(halves_.data(), host, static_cast<int64_t>(elements(t)));
}

void Executor::write_output_gradient(size_t i, const float* host, bool add) {
  const int t = m_.output_tensors[i];
  float* g = reinterpret_cast<float*>(gradients_[static_cast<size_t>(t)]);
  if (!add) {
    stream_->copy_to_device(gradients_[static_cast<size_t>(t)], host, tensor_bytes(t));
    return;
  }
  // A tensor listed as two outputs: added on the host, which the Trainer's CPU backend is.
  const int64_t n = static_cast<int64_t>(tensor_bytes(t) / 4);
  for (int64_t k = 0; k < n; ++k) g[k] += host[k];
}

void Executor::backward(const std::vector<char>& want_gradient, const std::vector<std::vector<float*>>& parameter_gradients) {
  for (int t : plan_.unwritten_gradients) stream_->fill_zero(gradients_[static_cast<size_t>(t)], tensor_bytes(t));
  BackwardContext b;
  b.ctx.tensors = &values_;
  b.ctx.batch = batch_;
  b.ctx.threads = threads_;
  b.ctx.stream = stream_->native();
  b.gradients = &gradients_;
  for (size_t i = plan_.kernels.size(); i-- > 0;) {
    std::vector<char>& want = want_input_[i];
    for (size_t k = 0; k < want.size(); ++k) {
      const int t = plan_.op_inputs[i][k];
      want[k] = gradients_[static_cast<size_t>(t)] != nullptr && want_gradient[static_cast<size_t>(t)];
    }
    b.ctx.workspace = address(plan_.backward_workspace_buffer[i]);
    b.want_input = &want;
    b.accumulate_input = &plan_.accumulate[i];
    b.parameter_gradients = parameter_gradients.empty() ? &no_parameters_ : &parameter_gradients[i];
    plan_.kernels[i]->backward(b);
  }
  stream_->synchronize();
}

void Executor::read_gradient(int t, float* host) const { stream_->copy_to_host(host, gradients_[static_cast<size_t>(t)], tensor_bytes(t)); }

void Executor::weights_changed(int op) { plan_.kernels[static_cast<size_t>(op)]->weights_changed(); }

}  // namespace edgegan
