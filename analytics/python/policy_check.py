"""Run AsyncWebRL's newest policy in Python's onnxruntime on features exported by Go.

The learner publishes each policy version on the compacted weights topic (key = policy
name) as an ``asyncwebrl.v1.Weights`` event whose ``onnx`` field is the whole model
(every parameter inside) and ``onnx_sha256`` its digest. This script reads the topic from
its start (read_committed), keeps the newest version of the policy whose digest checks,
loads it into onnxruntime and runs it on a feature batch written by

    asyncwebrl policy features -topic-prefix P. --out features.npz [--outputs]

(one array per graph input, batch first). When the file also holds the Go actors' outputs
(``--outputs``: go_type_logits, go_elem_logits, go_cand_logits, go_value, go_point_logits, go_point_offsets), it prints the
largest absolute difference and exits 1 above --tolerance. A PyTorch user can start from
the same ONNX file (``--save-onnx``) and the same inputs.

    .run/pyenv/bin/python analytics/python/policy_check.py \\
        --brokers 127.0.0.1:19092 --topic P.weights --features features.npz
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np
import onnxruntime as ort
from google.protobuf.message import DecodeError

from asyncwebrl.v1 import events_pb2
from transitions import records

OUTPUTS = ("type_logits", "elem_logits", "cand_logits", "value", "point_logits", "point_offsets")


def latest_weights(brokers: str, topic: str, policy: str) -> events_pb2.Weights | None:
    """The newest version of policy on the weights topic whose sha256 checks, or None."""
    best = None
    # Models go up to the topic's 64 MiB limit.
    big = {"fetch.message.max.bytes": 80 << 20, "receive.message.max.bytes": 100 << 20}
    for msg in records(brokers, topic, config=big):
        if (msg.key() or b"").decode("utf-8", "replace") != policy or not msg.value():
            continue  # another policy, or a tombstone
        try:
            w = events_pb2.Weights.FromString(msg.value())
        except DecodeError as err:
            print(f"skipping undecodable weights at offset {msg.offset()}: {err}", file=sys.stderr)
            continue
        if w.policy_name != policy or (best is not None and w.version <= best.version):
            continue
        if w.onnx_sha256 and hashlib.sha256(w.onnx).hexdigest() != w.onnx_sha256:
            print(f"skipping version {w.version}: onnx_sha256 does not match", file=sys.stderr)
            continue
        best = w
    return best


def run(onnx: bytes, features: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run the model on the named inputs; the outputs by name."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(onnx, sess_options=opts, providers=["CPUExecutionProvider"])
    feed = {i.name: features[i.name] for i in sess.get_inputs()}
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feed)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--brokers", default="127.0.0.1:19092", help="bootstrap servers (default 127.0.0.1:19092)")
    ap.add_argument("--topic", required=True, help="the weights topic, with its prefix, e.g. run-X.weights")
    ap.add_argument("--policy", default="default", help='the policy name (default "default")')
    ap.add_argument("--features", required=True, help="the .npz that `asyncwebrl policy features` wrote")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="largest allowed |python - go| (default 1e-4)")
    ap.add_argument("--out", help="write the outputs and the version as JSON to this file")
    ap.add_argument("--save-onnx", help="also write the model to this file")
    args = ap.parse_args(argv)

    w = latest_weights(args.brokers, args.topic, args.policy)
    if w is None:
        print(f"no version of policy {args.policy!r} on {args.topic}", file=sys.stderr)
        return 1
    if args.save_onnx:
        with open(args.save_onnx, "wb") as f:
            f.write(w.onnx)
    with np.load(args.features) as npz:
        feats = {k: npz[k] for k in npz.files}
    exported = int(feats["policy_version"][0]) if "policy_version" in feats else None
    if exported is not None and exported != w.version:
        print(f"note: features were exported with version {exported}'s architecture, running version {w.version}")
    outs = run(w.onnx, feats)
    batch = next(iter(outs.values())).shape[0]
    print(f"policy {args.policy!r} version {w.version}: ran {batch} observations")

    worst = None
    for name in OUTPUTS:
        if "go_" + name in feats:
            diff = float(np.max(np.abs(outs[name].astype(np.float64) - feats["go_" + name].astype(np.float64))))
            print(f"  {name}: max |python - go| = {diff:.3g}")
            worst = diff if worst is None else max(worst, diff)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(
                {"policy_version": w.version, "outputs": {k: {"shape": list(v.shape), "data": v.ravel().tolist()} for k, v in outs.items()}},
                f,
            )
    if worst is not None and worst > args.tolerance:
        print(f"outputs differ from Go's by {worst:.3g} > {args.tolerance:g}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
