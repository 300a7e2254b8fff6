#!/usr/bin/env python3
"""Independent checks of okb's JSON outputs, run by the Rust integration tests.

  check_json.py openingiq SCHEMA FILE...   validate OpeningIQ files against the JSON Schema,
                                           check responseWeights and replay every move with
                                           python-chess
  check_json.py openapi DOC MANIFEST       validate HTTP answers against the OpenAPI document;
                                           MANIFEST is [{"file": ..., "ref": "#/components/..."}]

Prints one line per problem and exits 1 if there is any.
"""

import json
import sys

import chess
from jsonschema import Draft202012Validator


def epd(fen):
    return " ".join(fen.split()[:4])


def check_tree(path, node, problems, board=None):
    """responseWeights and the moves of one node and its subtree."""
    weights = node["responseWeights"]
    where = f"{path}: node {node['nodeId']} ({node['san']})"
    if weights:
        total = sum(weights.values())
        if abs(total - 1.0) > 0.001:
            problems.append(f"{where}: responseWeights sum to {total}")
    elif node["children"] or node["engineResponses"]:
        problems.append(f"{where}: replies are known but responseWeights is empty")
    if not node["truncated"]:
        for child in node["children"]:
            if child["san"] not in weights:
                problems.append(f"{where}: child {child['san']} has no weight")
    if board is None:
        board = chess.Board(node["fen"])
    if epd(board.fen()) != epd(node["fen"]):
        problems.append(f"{where}: python-chess reaches {board.fen()}, the file says {node['fen']}")
    for response in node["engineResponses"]:
        play(board, response, f"{where}: engine reply", problems)
    for child in node["children"]:
        move = play(board, child, f"{where}: child", problems)
        if move is not None:
            after = board.copy()
            after.push(move)
            check_tree(path, child, problems, after)


def play(board, item, what, problems):
    """The move item["san"] on board, checked against item["uci"] (None if illegal)."""
    try:
        move = board.parse_san(item["san"])
    except ValueError as e:
        problems.append(f"{what} {item['san']} is illegal: {e}")
        return None
    if move.uci() != item["uci"]:
        problems.append(f"{what} {item['san']} is {move.uci()}, not {item['uci']}")
    return move


def openingiq(schema_path, files):
    validator = Draft202012Validator(json.load(open(schema_path)))
    problems = []
    for path in files:
        document = json.load(open(path))
        for error in validator.iter_errors(document):
            problems.append(f"{path}: {error.json_path}: {error.message}")
        if not problems:
            check_tree(path, document["tree"], problems)
    return problems


def openapi(doc_path, manifest_path):
    doc = json.load(open(doc_path))
    problems = []
    for item in json.load(open(manifest_path)):
        # The answer's schema, with the document's components beside it so refs resolve.
        validator = Draft202012Validator({"$ref": item["ref"], "components": doc["components"]})
        answer = json.load(open(item["file"]))
        for error in validator.iter_errors(answer):
            problems.append(f"{item['file']} ({item['ref']}): {error.json_path}: {error.message}")
    return problems


def main():
    mode = sys.argv[1]
    if mode == "openingiq":
        problems = openingiq(sys.argv[2], sys.argv[3:])
    elif mode == "openapi":
        problems = openapi(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown mode {mode}")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
