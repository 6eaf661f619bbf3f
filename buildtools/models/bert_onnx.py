"""Build a BERT encoder ONNX graph straight from numpy weights (no torch, no exporter).

Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, [batch, sequence]); output
``last_hidden_state`` (float32, [batch, sequence, hidden]): the interface Transformers.js'
feature-extraction pipeline and our CPython provider both expect. Pooling stays outside.
Only plain ops (Gather, MatMul, Softmax, LayerNormalization, Erf) so that every runtime —
onnxruntime-web WASM/WebGPU and ONNX Runtime CPU — runs it, and quantize_dynamic finds the
MatMul/Gather weights to quantize.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # first opset with LayerNormalization


def build_bert_onnx(tensors: dict[str, np.ndarray], config: dict, *, name: str) -> onnx.ModelProto:
    H = int(config["hidden_size"])
    NH = int(config["num_attention_heads"])
    NL = int(config["num_hidden_layers"])
    hd = H // NH
    eps = float(config["layer_norm_eps"])

    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def init(nm: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), nm))
        return nm

    def node(op: str, inputs: list[str], out: str, **attrs: object) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def const(nm: str, arr: np.ndarray) -> str:
        return init(nm, arr)

    def linear(x: str, prefix: str, out: str) -> str:
        # HF Linear weights are [out, in]; MatMul wants [in, out].
        w = init(prefix + ".weight", tensors[prefix + ".weight"].T.astype(np.float32))
        b = init(prefix + ".bias", tensors[prefix + ".bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, w], out + "/matmul"), b], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        g = init(prefix + ".weight", tensors[prefix + ".weight"].astype(np.float32))
        b = init(prefix + ".bias", tensors[prefix + ".bias"].astype(np.float32))
        return node("LayerNormalization", [x, g, b], out, axis=-1, epsilon=eps)

    # Embeddings: word + absolute position (0..S-1) + token type, then LayerNorm.
    word = init("embeddings.word_embeddings.weight", tensors["embeddings.word_embeddings.weight"])
    pos = init(
        "embeddings.position_embeddings.weight", tensors["embeddings.position_embeddings.weight"]
    )
    typ = init(
        "embeddings.token_type_embeddings.weight",
        tensors["embeddings.token_type_embeddings.weight"],
    )
    i64 = lambda v: np.array(v, dtype=np.int64)  # noqa: E731
    # Positions 0..S-1 as a Slice of the table (not Range + Gather: ONNX Runtime's embedding
    # fusion rewrites that pattern into a Slice with scalar starts and then fails at run time).
    seq = node("Shape", ["input_ids"], "seq_len", start=1, end=2)  # 1-D [S]
    pos_rows = node(
        "Slice", [pos, const("const_0", i64([0])), seq, const("const_axis0", i64([0]))], "emb/pos"
    )
    emb = node(
        "Add",
        [
            node(
                "Add",
                [
                    node("Gather", [word, "input_ids"], "emb/word"),
                    node("Gather", [typ, "token_type_ids"], "emb/type"),
                ],
                "emb/wt",
            ),
            pos_rows,
        ],
        "emb/sum",
    )
    x = layer_norm(emb, "embeddings.LayerNorm", "emb/ln")

    # Additive attention mask [B, 1, 1, S]: 0 for tokens, a large negative for padding.
    maskf = node("Cast", ["attention_mask"], "mask/float", to=TensorProto.FLOAT)
    inv = node("Sub", [const("const_1f", np.array(1.0, np.float32)), maskf], "mask/inv")
    neg = node("Mul", [inv, const("const_neg", np.array(-1e4, np.float32))], "mask/neg")
    mask = node("Unsqueeze", [neg, const("axes_12", i64([1, 2]))], "mask/add")

    heads_shape = const("shape_heads", i64([0, 0, NH, hd]))
    hidden_shape = const("shape_hidden", i64([0, 0, H]))
    scale = const("attn_scale", np.array(1.0 / math.sqrt(hd), np.float32))
    inv_sqrt2 = const("inv_sqrt2", np.array(1.0 / math.sqrt(2.0), np.float32))
    half = const("half", np.array(0.5, np.float32))
    one = const("one_f", np.array(1.0, np.float32))

    for i in range(NL):
        p = f"encoder.layer.{i}"
        o = f"l{i}"

        def heads(t: str, perm: list[int], tag: str, o: str = o) -> str:
            r = node("Reshape", [t, heads_shape], f"{o}/{tag}/split")
            return node("Transpose", [r], f"{o}/{tag}/heads", perm=perm)

        q = heads(linear(x, f"{p}.attention.self.query", f"{o}/q"), [0, 2, 1, 3], "q")
        k = heads(linear(x, f"{p}.attention.self.key", f"{o}/k"), [0, 2, 3, 1], "k")
        v = heads(linear(x, f"{p}.attention.self.value", f"{o}/v"), [0, 2, 1, 3], "v")
        scores = node("Mul", [node("MatMul", [q, k], f"{o}/qk"), scale], f"{o}/scaled")
        probs = node("Softmax", [node("Add", [scores, mask], f"{o}/masked")], f"{o}/probs", axis=-1)
        ctx = node(
            "Transpose", [node("MatMul", [probs, v], f"{o}/ctx")], f"{o}/ctx_t", perm=[0, 2, 1, 3]
        )
        ctx = node("Reshape", [ctx, hidden_shape], f"{o}/ctx_merged")
        attn = linear(ctx, f"{p}.attention.output.dense", f"{o}/attn_out")
        x = layer_norm(
            node("Add", [x, attn], f"{o}/res1"), f"{p}.attention.output.LayerNorm", f"{o}/ln1"
        )
        # Exact (erf) GELU, as in BERT: 0.5 * h * (1 + erf(h / sqrt 2)).
        h = linear(x, f"{p}.intermediate.dense", f"{o}/ffn_in")
        erf = node("Erf", [node("Mul", [h, inv_sqrt2], f"{o}/gelu_div")], f"{o}/gelu_erf")
        g = node(
            "Mul",
            [node("Mul", [h, half], f"{o}/gelu_half"), node("Add", [erf, one], f"{o}/gelu_1p")],
            f"{o}/gelu",
        )
        f = linear(g, f"{p}.output.dense", f"{o}/ffn_out")
        x = layer_norm(node("Add", [x, f], f"{o}/res2"), f"{p}.output.LayerNorm", f"{o}/ln2")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    dims = ["batch_size", "sequence_length"]
    graph = helper.make_graph(
        nodes,
        name,
        inputs=[
            helper.make_tensor_value_info(n, TensorProto.INT64, dims)
            for n in ("input_ids", "attention_mask", "token_type_ids")
        ],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, H])],
        initializer=inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="omoide-buildtools"
    )
    model.ir_version = 8  # readable by older onnxruntime-web builds too
    return model


LINEARS = ("q", "k", "v", "attn_out", "ffn_in", "ffn_out")


def matmul_names(layers: range | list[int], kinds: tuple[str, ...] = LINEARS) -> list[str]:
    """Names of the weight MatMul nodes ``build_bert_onnx`` creates (for nodes_to_exclude)."""
    return [f"l{i}/{k}/matmul" for i in layers for k in kinds]
