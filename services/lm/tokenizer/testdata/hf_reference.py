"""Hugging Face tokenizers' encoding of strings, the reference the Go
tokenizer is tested against (services/lm/tokenizer/reference_test.go).

Usage: hf_reference.py VOCAB.json STRINGS.json > IDS.json

VOCAB.json holds the GGUF's tokens, merges, special tokens and
pre-tokenizer name as the Go reader found them; the tokenizer is built the
way Hugging Face builds SmolLM2's (tokenizer.json): byte-level BPE, the
digits split one by one, then GPT-2's byte-level pre-tokenizer.
"""
import json
import sys

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        vocab = json.load(f)
    with open(sys.argv[2], encoding="utf-8") as f:
        strings = json.load(f)
    ids = {tok: i for i, tok in reversed(list(enumerate(vocab["tokens"])))}
    merges = [tuple(m.split(" ")) for m in vocab["merges"]]
    tok = Tokenizer(models.BPE(vocab=ids, merges=merges, fuse_unk=False, byte_fallback=False))
    if vocab["pre"] == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
        )
    elif vocab["pre"] in ("gpt2", "default", ""):
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        sys.exit("unknown pre-tokenizer " + vocab["pre"])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in vocab["special"]])
    out = [tok.encode(s, add_special_tokens=False).ids for s in strings]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
