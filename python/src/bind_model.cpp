// Bindings of the graph IR: load_model, Graph, Op, Tensor, stats(), and infer (golden executor).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "compiler/ir/json.hpp"
#include "compiler/stats/stats.hpp"
#include "compiler/targets/cpu/executor.hpp"
#include "compiler/targets/cpu/quantize_flow.hpp"
#include "compiler/zoo/load_model.hpp"
#include "python/src/bindings.hpp"
#include "python/src/cancellable.hpp"
#include "python/src/convert.hpp"

namespace tessel::py_api {
namespace {

py::tuple shape_tuple(const ir::Shape& shape) {
  py::tuple out(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) out[i] = shape[i];
  return out;
}

py::object attr_value(const ir::AttrValue& value) {
  return std::visit([](const auto& v) -> py::object { return py::cast(v); }, value);
}

py::dict op_attrs(const ir::Op& op) {
  py::dict attrs;
  for (const auto& [key, value] : op.attrs) attrs[py::str(key)] = attr_value(value);
  return attrs;
}

// The numpy dtype of an IR dtype.
py::dtype numpy_dtype(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::f32:
      return py::dtype::of<float>();
    case ir::DType::i8:
      return py::dtype::of<std::int8_t>();
    case ir::DType::u8:
      return py::dtype::of<std::uint8_t>();
    case ir::DType::i16:
      return py::dtype::of<std::int16_t>();
    case ir::DType::i32:
      return py::dtype::of<std::int32_t>();
  }
  return py::dtype::of<float>();
}

std::string shape_text(const ir::Shape& shape) {
  return ir::shape_string(shape);
}

// The array must have the graph input's shape exactly.
void require_shape(const py::array& array, const std::string& input, const ir::Tensor& tensor) {
  ir::Shape shape(array.shape(), array.shape() + array.ndim());
  if (shape != tensor.shape)
    throw ArgumentError("input '" + input + "': shape " + shape_text(shape) +
                        " does not match the model's " + shape_text(tensor.shape));
}

// Token ids (an i32 input) from an integer array: int32 or int64 (numpy's default, as torch
// exports them), each id checked to fit int32 (the executor checks the table's range).
cpu::TensorData ids_from_array(const py::array& array, const std::string& input,
                               const ir::Tensor& tensor) {
  if (array.dtype().kind() != 'i')
    throw ArgumentError("input '" + input + "': token ids need an integer array, got " +
                        py::str(array.dtype()).cast<std::string>());
  require_shape(array, input, tensor);
  auto ids = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(array);
  cpu::TensorData data(ir::DType::i32, tensor.shape);
  for (py::ssize_t i = 0; i < ids.size(); ++i) {
    const std::int64_t id = ids.data()[i];
    if (id < std::numeric_limits<std::int32_t>::min() ||
        id > std::numeric_limits<std::int32_t>::max())
      throw ArgumentError("input '" + input + "': token id " + std::to_string(id) +
                          " at position " + std::to_string(i) + " does not fit int32");
    data.data<std::int32_t>()[i] = static_cast<std::int32_t>(id);
  }
  return data;
}

// One graph input's value from a numpy array: float32 (integer token ids for an i32 input), the
// input's shape exactly.
cpu::TensorData tensor_from_array(py::handle value, const std::string& input,
                                  const ir::Tensor& tensor) {
  if (!py::isinstance<py::array>(value))
    throw ArgumentError("input '" + input + "': expected a numpy.ndarray, got " +
                        py::type::of(value).attr("__name__").cast<std::string>());
  auto array = py::reinterpret_borrow<py::array>(value);
  if (tensor.dtype == ir::DType::i32) return ids_from_array(array, input, tensor);
  if (!array.dtype().equal(py::dtype::of<float>()))
    throw ArgumentError("input '" + input + "': expected a float32 array, got " +
                        py::str(array.dtype()).cast<std::string>() +
                        " (convert it with x.astype(numpy.float32))");
  require_shape(array, input, tensor);
  auto contiguous = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(array);
  cpu::TensorData data(ir::DType::f32, tensor.shape);
  std::memcpy(data.raw(), contiguous.data(), data.bytes());
  return data;
}

py::array array_from_tensor(const cpu::TensorData& value) {
  py::array out(numpy_dtype(value.dtype()),
                std::vector<py::ssize_t>(value.shape().begin(), value.shape().end()));
  std::memcpy(out.mutable_data(), value.raw(), value.bytes());
  return out;
}

}  // namespace

py::object run_executor(const ir::Graph& graph, py::handle x) {
  std::map<std::string, cpu::TensorData> inputs;
  const auto input_ids = graph.inputs();
  if (py::isinstance<py::dict>(x)) {
    auto given = py::reinterpret_borrow<py::dict>(x);
    for (ir::OpId id : input_ids) {
      const std::string& name = graph.op(id).outputs[0];
      if (!given.contains(name))
        throw ArgumentError("missing input '" + name +
                            "' (the model's inputs: " + std::to_string(input_ids.size()) + ")");
      inputs.emplace(name, tensor_from_array(given[py::str(name)], name, graph.tensor(name)));
    }
    if (given.size() != input_ids.size())
      throw ArgumentError("the model has " + std::to_string(input_ids.size()) + " inputs, " +
                          std::to_string(given.size()) + " were given");
  } else {
    if (input_ids.size() != 1)
      throw ArgumentError("the model has " + std::to_string(input_ids.size()) +
                          " inputs: pass a dict {name: array}");
    const std::string& name = graph.op(input_ids[0]).outputs[0];
    inputs.emplace(name, tensor_from_array(x, name, graph.tensor(name)));
  }
  auto outputs = run_cancellable("tessel.infer", [&] {
    cpu::Executor executor(graph);
    return executor.run(inputs);
  });
  auto values = value_or_raise(std::move(outputs), "executor");
  if (graph.outputs().size() == 1) return array_from_tensor(values.at(graph.outputs()[0]));
  py::dict out;
  for (const std::string& name : graph.outputs())
    out[py::str(name)] = array_from_tensor(values.at(name));
  return out;
}

void check_has_weights(const ir::Graph& graph) {
  for (const auto& [name, tensor] : graph.tensors())
    if (tensor.constant && !tensor.has_data())
      throw ArgumentError("model '" + graph.name() + "': constant '" + name +
                          "' has no values (load it with load_model(..., with_weights=True))");
}

void bind_model(py::module_& m) {
  py::class_<ir::Tensor>(m, "Tensor",
                         "A named value of the graph IR: input, op result or constant.")
      .def_readonly("name", &ir::Tensor::name, "The tensor's name in the graph.")
      .def_property_readonly(
          "shape", [](const ir::Tensor& t) { return shape_tuple(t.shape); },
          "Its shape, NCHW for activations (a tuple of ints).")
      .def_property_readonly(
          "dtype", [](const ir::Tensor& t) { return std::string(ir::to_string(t.dtype)); },
          "Its element type: 'f32', 'i8', 'i16', 'i32', ...")
      .def_readonly("constant", &ir::Tensor::constant,
                    "True for weights, biases and other values fixed in the model.")
      .def_property_readonly("bytes", &ir::Tensor::bytes,
                             "Its size in bytes (elements x dtype width).")
      .def_property_readonly("has_data", &ir::Tensor::has_data,
                             "Whether a constant carries its values (not with with_weights=False).")
      .def(
          "values",
          [](const ir::Tensor& t) -> py::object {
            if (!t.has_data()) return py::none();
            return array_from_tensor(cpu::TensorData::from_constant(t));
          },
          "A constant's values as a numpy array of its dtype (a copy); None without values.")
      .def("__repr__", [](const ir::Tensor& t) {
        return "<tessel.Tensor " + t.name + ": " + ir::type_string(t) + ">";
      });

  py::class_<ir::Op>(m, "Op", "One operation of the graph IR.")
      .def_readonly("name", &ir::Op::name, "The op's name in the graph.")
      .def_property_readonly(
          "kind", [](const ir::Op& op) { return std::string(ir::to_string(op.kind)); },
          "The operator: 'Conv', 'Gemm', 'Add', 'MaxPool', ... (docs/ir.md).")
      .def_readonly("inputs", &ir::Op::inputs, "Names of the tensors it reads, in operand order.")
      .def_readonly("outputs", &ir::Op::outputs, "Names of the tensors it writes.")
      .def_property_readonly("attrs", &op_attrs,
                             "Its attributes (strides, pads, axis, ...) as a dict.")
      .def("__repr__", [](const ir::Op& op) {
        return "<tessel.Op " + op.name + " (" + std::string(ir::to_string(op.kind)) + ")>";
      });

  py::class_<ir::Graph, std::shared_ptr<ir::Graph>>(m, "Graph", "A network in the graph IR.")
      .def_property_readonly("name", &ir::Graph::name, "The model's name.")
      .def_property_readonly(
          "ops",
          [](const ir::Graph& g) {
            std::vector<ir::Op> ops;
            ops.reserve(g.num_ops());
            for (ir::OpId id = 0; id < g.num_ops(); ++id) ops.push_back(g.op(id));
            return ops;
          },
          "Every op in id order (a copy).")
      .def_property_readonly(
          "tensors",
          [](py::object self) {
            const auto& g = self.cast<const ir::Graph&>();
            py::dict out;
            for (const auto& [name, tensor] : g.tensors())
              out[py::str(name)] =
                  py::cast(&tensor, py::return_value_policy::reference_internal, self);
            return out;
          },
          "Tensors by name (views into the graph, which they keep alive).")
      .def_property_readonly(
          "inputs",
          [](const ir::Graph& g) {
            std::vector<std::string> names;
            for (ir::OpId id : g.inputs()) names.push_back(g.op(id).outputs[0]);
            return names;
          },
          "Names of the graph's input tensors.")
      .def_property_readonly("outputs", &ir::Graph::outputs, "Names of the graph's outputs.")
      .def(
          "shape",
          [](const ir::Graph& g, const std::string& tensor) {
            if (!g.has_tensor(tensor)) throw py::key_error("no tensor '" + tensor + "'");
            return shape_tuple(g.tensor(tensor).shape);
          },
          py::arg("tensor"), "The shape of one tensor.")
      .def_property_readonly("parameter_count", &ir::parameter_count,
                             "Elements of every constant (weights, biases, ...).")
      .def(
          "stats",
          [](const ir::Graph& g, int bits, bool caffe_batchnorm) {
            stats::StatsOptions options;
            options.bits = bits;
            options.caffe_batchnorm = caffe_batchnorm;
            return to_python(
                stats::to_json(value_or_raise(stats::compute_stats(g, options)), false));
          },
          py::arg("bits") = 8, py::arg("caffe_batchnorm") = true,
          "MACs, parameters and bytes per layer and in total, as `tessel stats --json`.")
      .def(
          "to_json",
          [](const ir::Graph& g, bool include_data) {
            ir::JsonOptions options;
            options.include_data = include_data;
            return ir::to_json(g, options).dump(1);
          },
          py::arg("include_data") = false, "The IR's JSON form (docs/ir.md).")
      .def("__repr__", [](const ir::Graph& g) {
        return "<tessel.Graph " + g.name() + ": " + std::to_string(g.num_ops()) + " ops>";
      });

  m.def(
      "load_model",
      [](const std::string& name_or_path, bool with_weights, std::int64_t batch,
         std::uint64_t seed) {
        zoo::LoadOptions options;
        options.zoo.with_weights = with_weights;
        options.zoo.batch = batch;
        options.zoo.seed = seed;
        return load_cancellable(name_or_path, options);
      },
      py::arg("name_or_path"), py::kw_only(), py::arg("with_weights") = true, py::arg("batch") = 1,
      py::arg("seed") = 0);

  m.def(
      "default_input",
      [](const std::vector<std::int64_t>& shape, std::uint64_t seed) {
        return array_from_tensor(cpu::default_input(ir::Shape(shape.begin(), shape.end()), seed));
      },
      py::arg("shape"), py::arg("seed") = 0,
      "The seeded N(0, 1) input every tool uses when none is given (`tessel infer`, the "
      "default DRAM image of `tessel compile`).");

  m.def("zoo_models", &zoo::model_names, "The names load_model knows besides file paths.");

  m.def(
      "_infer_float",
      [](const ir::Graph& graph, py::handle x) {
        check_has_weights(graph);
        // (Not polled: a Ctrl-C here raises when it returns, before the executor starts.)
        auto prepared = run_cancellable("tessel.infer", [&] { return cpu::prepare_graph(graph); });
        const ir::Graph folded = value_or_raise(std::move(prepared), "prepare");
        return run_executor(folded, x);
      },
      py::arg("model"), py::arg("x"));
}

}  // namespace tessel::py_api
