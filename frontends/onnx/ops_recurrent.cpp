// ONNX's recurrent layers: RNN, GRU and LSTM, every direction, layout, activation list,
// clip, peepholes, coupled gates, initial states and per-batch sequence lengths.
//
// A layer is unrolled over its (static) sequence: the input projection of every step is one
// matmul up front, then each step is the recurrent matmul and its gate arithmetic, which the
// scheduler fuses into a kernel or two per step. A batch element past its sequence length
// keeps its state and writes zeros to Y, so a reverse pass over padded sequences starts at each
// element's own last step.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "frontends/onnx/node.hpp"

namespace beamlab::onnx {
namespace {

using Activation = std::function<Tensor(const Tensor&)>;

// An activation by its ONNX name, taking alpha/beta from the node's lists in order.
Activation activation(std::string name, const std::vector<double>& alphas,
                      const std::vector<double>& betas, size_t& next_alpha, size_t& next_beta) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto take = [](const std::vector<double>& v, size_t& i, double dflt) {
    return i < v.size() ? v[i++] : dflt;
  };
  if (name == "sigmoid") return [](const Tensor& x) { return x.sigmoid(); };
  if (name == "tanh") return [](const Tensor& x) { return x.tanh(); };
  if (name == "relu") return [](const Tensor& x) { return x.relu(); };
  if (name == "softsign") return [](const Tensor& x) { return x / (1.0 + x.abs()); };
  if (name == "softplus") return [](const Tensor& x) { return x.softplus(); };
  if (name == "affine") {
    double a = take(alphas, next_alpha, 1.0), b = take(betas, next_beta, 0.0);
    return [a, b](const Tensor& x) { return x * a + b; };
  }
  if (name == "leakyrelu") {
    double a = take(alphas, next_alpha, 0.01);
    return [a](const Tensor& x) { return x.leaky_relu(a); };
  }
  if (name == "thresholdedrelu") {
    double a = take(alphas, next_alpha, 1.0);
    return [a](const Tensor& x) { return (x > a).where(x, x.scalar_like(0)); };
  }
  if (name == "scaledtanh") {
    double a = take(alphas, next_alpha, 1.0), b = take(betas, next_beta, 1.0);
    return [a, b](const Tensor& x) { return (x * b).tanh() * a; };
  }
  if (name == "hardsigmoid") {
    double a = take(alphas, next_alpha, 0.2), b = take(betas, next_beta, 0.5);
    return [a, b](const Tensor& x) { return (x * a + b).clamp(0.0, 1.0); };
  }
  if (name == "elu") {
    double a = take(alphas, next_alpha, 1.0);
    return [a](const Tensor& x) { return (x < 0).where((x.exp() - 1.0) * a, x); };
  }
  user_error << "activation '" << name << "' is not one ONNX's recurrent layers define (Relu, "
             << "Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, "
             << "Elu, Softsign, Softplus)";
  return {};
}

// What differs between the three layers.
struct Cell {
  int64_t gates;                        ///< blocks of hidden_size rows in W and R
  std::vector<std::string> activations; ///< the defaults, per direction
};

// One direction's weights: W (gates*H, I), R (gates*H, H), biases Wb and Rb (gates*H), and
// LSTM's peepholes (3*H).
struct Weights {
  Tensor w, r;
  std::optional<Tensor> wb, rb, p;
};

// Block k of `hidden` along `axis` (a gate's rows of W, R or a bias).
Tensor block(const Tensor& t, int64_t k, int64_t hidden, int64_t axis) {
  return t.slice(axis, k * hidden, (k + 1) * hidden);
}

// Input i, checked to have `rank` dims before any of them is read.
std::optional<Tensor> ranked(const Node& n, size_t i, int64_t rank, const char* name) {
  std::optional<Tensor> t = n.opt(i);
  user_assert(!t || t->ndim() == rank)
      << name << " must have " << rank << " dims, not " << shape_str(t->shape());
  return t;
}

// The node's settings shared by all three layers.
struct Layer {
  std::string op;
  int64_t hidden = 0, dirs = 1, seq = 0, batch = 0;
  bool reverse_only = false, batch_first = false;
  std::optional<double> clip;
  std::vector<Activation> f;                  ///< per direction, the cell's activations in order
  Tensor x{0.0};                              ///< (seq, batch, input)
  std::optional<Tensor> lens;                 ///< (batch,) int
  std::vector<std::optional<Tensor>> initial; ///< (dirs, batch, H) per state, or none
};

Layer read_layer(const Node& n, const Cell& cell, size_t states) {
  Layer l;
  l.op = n.op();
  l.hidden = n.attr_int("hidden_size", 0);
  std::string direction = n.attr_string("direction", "forward");
  user_assert(direction == "forward" || direction == "reverse" || direction == "bidirectional")
      << "attribute 'direction' must be forward, reverse or bidirectional, not '" << direction
      << "'";
  l.dirs = direction == "bidirectional" ? 2 : 1;
  l.reverse_only = direction == "reverse";
  l.batch_first = n.attr_int("layout", 0) != 0;
  if (n.has_attr("clip")) l.clip = n.attr_float("clip", 0);
  (void)n.in(0), (void)n.in(1), (void)n.in(2); // X, W and R are required
  l.x = *ranked(n, 0, 3, "X");
  ranked(n, 2, 3, "R");
  ranked(n, 3, 2, "B");
  if (l.op == "LSTM") ranked(n, 7, 2, "P");
  if (l.batch_first) l.x = l.x.permute({1, 0, 2});
  l.seq = dim(l.x, 0);
  l.batch = dim(l.x, 1);
  const Tensor w = *ranked(n, 1, 3, "W");
  if (l.hidden == 0) l.hidden = dim(w, 1) / cell.gates;
  user_assert(w.ndim() == 3 && dim(w, 0) == l.dirs && dim(w, 1) == cell.gates * l.hidden &&
              dim(w, 2) == dim(l.x, 2))
      << "W is " << shape_str(w.shape()) << " but (" << l.dirs << ", " << cell.gates * l.hidden
      << ", " << dim(l.x, 2) << ") was expected (directions, " << cell.gates
      << " x hidden_size, input size)";
  if (n.has(4)) {
    l.lens = ranked(n, 4, 1, "sequence_lens")->cast(Scalar::Int64);
    user_assert(l.lens->numel() == l.batch)
        << "sequence_lens has " << l.lens->numel() << " values for a batch of " << l.batch;
  }
  for (size_t s = 0; s < states; ++s) {
    std::optional<Tensor> init = ranked(n, 5 + s, 3, s == 0 ? "initial_h" : "initial_c");
    if (init && l.batch_first) init = init->permute({1, 0, 2});
    l.initial.push_back(init);
  }
  std::vector<std::string> names = cell.activations;
  if (std::vector<std::string> given = n.attr_strings("activations"); !given.empty()) {
    names = std::move(given);
    user_assert(names.size() == cell.activations.size() * static_cast<size_t>(l.dirs))
        << "attribute 'activations' has " << names.size() << " names; " << l.op << " takes "
        << cell.activations.size() << " per direction";
  } else if (l.dirs == 2) {
    names.insert(names.end(), cell.activations.begin(), cell.activations.end());
  }
  std::vector<double> alphas = n.attr_floats("activation_alpha"),
                      betas = n.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  for (const std::string& name : names) l.f.push_back(activation(name, alphas, betas, ai, bi));
  return l;
}

Weights read_weights(const Node& n, const Layer& l, int64_t dir, int64_t gates) {
  auto pick = [&](const Tensor& t) { // this direction's (ranks checked by read_layer)
    user_assert(dim(t, 0) == l.dirs) << "a weight of shape " << shape_str(t.shape()) << " has "
                                     << dim(t, 0) << " directions, not " << l.dirs;
    return t.slice(0, dir, dir + 1).squeeze(0);
  };
  Weights w{pick(n.in(1)), pick(n.in(2)), {}, {}, {}};
  user_assert((w.r.shape() == Shape{gates * l.hidden, l.hidden}))
      << "R is " << shape_str(n.in(2).shape()) << " but (" << l.dirs << ", " << gates * l.hidden
      << ", " << l.hidden << ") was expected";
  if (n.has(3)) {
    Tensor b = pick(n.in(3));
    user_assert(b.numel() == 2 * gates * l.hidden)
        << "B has " << b.numel() << " values per direction; " << 2 * gates * l.hidden
        << " (Wb and Rb) were expected";
    w.wb = block(b, 0, gates * l.hidden, 0);
    w.rb = block(b, 1, gates * l.hidden, 0);
  }
  if (l.op == "LSTM" && n.has(7)) w.p = pick(n.in(7));
  return w;
}

// The recurrence of one direction: `step` maps (input projection of step t, states) to the
// new states, the first of which is the output. Returns Y (seq, batch, H) and the last states.
using Step = std::function<std::vector<Tensor>(const Tensor& xw, const std::vector<Tensor>& h)>;
std::pair<Tensor, std::vector<Tensor>> unroll(const Layer& l, bool backwards, const Tensor& xw,
                                              std::vector<Tensor> states, const Step& step) {
  std::vector<Tensor> ys; // in step order; reversed at the end when going backwards
  for (int64_t i = 0; i < l.seq; ++i) {
    int64_t t = backwards ? l.seq - 1 - i : i;
    Tensor xt = xw.slice(0, t, t + 1).squeeze(0);
    std::vector<Tensor> next = step(xt, states);
    if (l.lens) {
      // Elements whose sequence ended before step t keep their state and output zeros.
      Tensor live = (*l.lens > static_cast<double>(t)).reshape({l.batch, 1});
      for (size_t s = 0; s < next.size(); ++s) next[s] = live.where(next[s], states[s]);
      ys.push_back(live.where(next[0], next[0].scalar_like(0)));
    } else {
      ys.push_back(next[0]);
    }
    states = std::move(next);
  }
  if (backwards) std::reverse(ys.begin(), ys.end());
  return {Tensor::stack(ys, 0), states};
}

// X (seq, batch, I) @ W^T (+ Wb + Rb where the cell adds them to every step): (seq, batch, G*H).
Tensor project(const Layer& l, const Tensor& w, const std::optional<Tensor>& bias) {
  Tensor xw = l.x.cast(w.dtype()).reshape({l.seq * l.batch, dim(l.x, 2)}).matmul(w.transpose(0, 1));
  if (bias) xw = xw + *bias;
  return xw.reshape({l.seq, l.batch, dim(w, 0)});
}

Tensor clipped(const Layer& l, const Tensor& x) { return l.clip ? x.clamp(-*l.clip, *l.clip) : x; }

// Runs every direction and assembles Y (seq, dirs, batch, H) and the final states
// (dirs, batch, H), in the node's layout.
std::vector<Value> run(const Node& n, const Layer& l, int64_t gates, size_t states,
                       const std::function<Step(const Weights&, size_t f0)>& make_step,
                       const std::function<std::optional<Tensor>(const Weights&)>& step_bias) {
  std::vector<Tensor> ys;
  std::vector<std::vector<Tensor>> finals(states);
  size_t per_dir = l.f.size() / static_cast<size_t>(l.dirs);
  for (int64_t d = 0; d < l.dirs; ++d) {
    Weights w = read_weights(n, l, d, gates);
    std::vector<Tensor> init;
    for (size_t s = 0; s < states; ++s) {
      const auto& given = l.initial[s];
      user_assert(!given || given->shape() == (Shape{l.dirs, l.batch, l.hidden}))
          << "an initial state is " << shape_str(given->shape()) << ", not (" << l.dirs << ", "
          << l.batch << ", " << l.hidden << ")";
      init.push_back(given ? given->slice(0, d, d + 1).squeeze(0).cast(w.w.dtype())
                           : Tensor::zeros({l.batch, l.hidden}, w.w.dtype()));
    }
    bool backwards = l.reverse_only || d == 1;
    auto [y, last] = unroll(l, backwards, project(l, w.w, step_bias(w)), init,
                            make_step(w, static_cast<size_t>(d) * per_dir));
    ys.push_back(y.reshape({l.seq, 1, l.batch, l.hidden}));
    for (size_t s = 0; s < states; ++s)
      finals[s].push_back(last[s].reshape({1, l.batch, l.hidden}));
  }
  Tensor y = Tensor::cat(ys, 1);
  std::vector<Value> out;
  out.emplace_back(l.batch_first ? y.permute({2, 0, 1, 3}) : y);
  for (size_t s = 0; s < states; ++s) {
    Tensor f = Tensor::cat(finals[s], 0);
    out.emplace_back(l.batch_first ? f.permute({1, 0, 2}) : f);
  }
  return out;
}

// Wb + Rb, added to every step's input projection (RNN, LSTM; GRU keeps Rbh apart).
std::optional<Tensor> both_biases(const Weights& w) {
  if (!w.wb) return std::nullopt;
  return *w.wb + *w.rb;
}

std::vector<Value> rnn(const Node& n) {
  Layer l = read_layer(n, {1, {"Tanh"}}, 1);
  auto make_step = [&l](const Weights& w, size_t f0) -> Step {
    Activation f = l.f[f0];
    Tensor rt = w.r.transpose(0, 1);
    return [&l, f, rt](const Tensor& xw, const std::vector<Tensor>& h) {
      return std::vector<Tensor>{f(clipped(l, xw + h[0].matmul(rt)))};
    };
  };
  return run(n, l, 1, 1, make_step, both_biases);
}

// GRU, gates z, r, h: z = f(x Wz + h Rz + b), r = f(x Wr + h Rr + b),
// h' = g(x Wh + (r h) Rh + Rbh + Wbh), or with linear_before_reset g(x Wh + r (h Rh + Rbh) + Wbh);
// H = (1 - z) h' + z H.
std::vector<Value> gru(const Node& n) {
  Layer l = read_layer(n, {3, {"Sigmoid", "Tanh"}}, 1);
  bool linear_before_reset = n.attr_int("linear_before_reset", 0) != 0;
  const int64_t hs = l.hidden;
  auto make_step = [&l, hs, linear_before_reset](const Weights& w, size_t f0) -> Step {
    Activation f = l.f[f0], g = l.f[f0 + 1];
    Tensor rzr = block(w.r, 0, 2 * hs, 0).transpose(0, 1); // (H, 2H): z and r
    Tensor rh = block(w.r, 2, hs, 0).transpose(0, 1);
    std::optional<Tensor> rbh = w.rb ? std::optional<Tensor>(block(*w.rb, 2, hs, 0)) : std::nullopt;
    return [&l, f, g, rzr, rh, rbh, hs, linear_before_reset](const Tensor& xw,
                                                             const std::vector<Tensor>& h) {
      const Tensor& prev = h[0];
      Tensor zr = xw.slice(1, 0, 2 * hs) + prev.matmul(rzr);
      Tensor z = f(clipped(l, zr.slice(1, 0, hs)));
      Tensor r = f(clipped(l, zr.slice(1, hs, 2 * hs)));
      Tensor xh = xw.slice(1, 2 * hs, 3 * hs);
      Tensor hh = linear_before_reset ? (rbh ? prev.matmul(rh) + *rbh : prev.matmul(rh)) * r
                                      : (r * prev).matmul(rh) + (rbh ? *rbh : prev.scalar_like(0));
      Tensor cand = g(clipped(l, xh + hh));
      return std::vector<Tensor>{(1.0 - z) * cand + z * prev};
    };
  };
  // Wb for every gate, and Rb for z and r, are added to the input projection; Rbh is not
  // (it sits inside the reset).
  auto bias = [hs](const Weights& w) -> std::optional<Tensor> {
    if (!w.wb) return std::nullopt;
    Tensor rb = Tensor::cat(
        std::vector<Tensor>{block(*w.rb, 0, 2 * hs, 0), Tensor::zeros({hs}, w.rb->dtype())}, 0);
    return *w.wb + rb;
  };
  return run(n, l, 3, 1, make_step, bias);
}

// LSTM, gates i, o, f, c: i = f(x Wi + h Ri + Pi C + b), f likewise (or 1 - i with
// input_forget), c' = g(x Wc + h Rc + b), C = f C + i c', o = f(x Wo + h Ro + Po C + b),
// H = o h(C).
std::vector<Value> lstm(const Node& n) {
  Layer l = read_layer(n, {4, {"Sigmoid", "Tanh", "Tanh"}}, 2);
  bool input_forget = n.attr_int("input_forget", 0) != 0;
  const int64_t hs = l.hidden;
  auto make_step = [&l, hs, input_forget](const Weights& w, size_t f0) -> Step {
    Activation f = l.f[f0], g = l.f[f0 + 1], h = l.f[f0 + 2];
    Tensor rt = w.r.transpose(0, 1);
    std::optional<Tensor> p = w.p;
    user_assert(!p || p->numel() == 3 * hs)
        << "P has " << p->numel() << " values per direction; " << 3 * hs << " were expected";
    return
        [&l, f, g, h, rt, p, hs, input_forget](const Tensor& xw, const std::vector<Tensor>& state) {
          const Tensor &prev_h = state[0], &prev_c = state[1];
          Tensor all = xw + prev_h.matmul(rt);
          auto gate = [&](int64_t k) { return block(all, k, hs, 1); };
          auto peep = [&](int64_t k, const Tensor& c) {
            return p ? block(*p, k, hs, 0) * c : c.scalar_like(0);
          };
          Tensor i = f(clipped(l, gate(0) + peep(0, prev_c)));
          Tensor fg = input_forget ? 1.0 - i : f(clipped(l, gate(2) + peep(2, prev_c)));
          Tensor cand = g(clipped(l, gate(3)));
          Tensor c = fg * prev_c + i * cand;
          Tensor o = f(clipped(l, gate(1) + peep(1, c)));
          return std::vector<Tensor>{o * h(c), c};
        };
  };
  return run(n, l, 4, 2, make_step, both_biases);
}

} // namespace

void add_recurrent_ops(ConverterTable& t) {
  t["RNN"] = rnn;
  t["GRU"] = gru;
  t["LSTM"] = lstm;
}

} // namespace beamlab::onnx
