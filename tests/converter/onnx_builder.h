// Builds small ONNX models in tests, so every converter rule can be exercised
// without PyTorch.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace edgegan::testing {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("edgegan-tests");
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
  }

  OnnxBuilder& input(const std::string& name, std::vector<int64_t> dims, int type = onnx::TensorProto::FLOAT) {
    auto* v = model_.mutable_graph()->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (size_t k = 0; k < dims.size(); ++k) {
      auto* d = t->mutable_shape()->add_dim();
      if (k == 0) d->set_dim_param("N");
      else d->set_dim_value(dims[k]);
    }
    return *this;
  }

  OnnxBuilder& output(const std::string& name) {
    model_.mutable_graph()->add_output()->set_name(name);
    return *this;
  }

  OnnxBuilder& floats(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
    return *this;
  }

  OnnxBuilder& ints(const std::string& name, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }

  onnx::NodeProto& node(const std::string& op, const std::string& name, std::vector<std::string> inputs, std::vector<std::string> outputs) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return *n;
  }

  static void attr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> values) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t value) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, float value) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& value) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
  }

  std::string bytes() const { return model_.SerializeAsString(); }
  onnx::ModelProto& proto() { return model_; }

 private:
  onnx::ModelProto model_;
};

}  // namespace edgegan::testing
