"""Schemathesis hooks for okb's API: strategies for the string formats the OpenAPI
document declares (`fen`, `san-line`, `uci-line`), built with python-chess, so that
generated "valid" data is what the server accepts: legal positions and legal moves.

Also a deserializer for `application/x-ndjson` (`GET /player`), so its answers are
validated too. Loaded with SCHEMATHESIS_HOOKS=okb_hooks (this folder on PYTHONPATH).
"""

import json

import chess
import schemathesis
from hypothesis import strategies as st

# Random games: a list of choices, each picking one of the legal moves where it is played.
_choices = st.lists(st.integers(min_value=0, max_value=10_000), max_size=16)


def _play(choices, board=None):
    board = board or chess.Board()
    moves = []
    for c in choices:
        legal = list(board.legal_moves)
        if not legal:
            break
        move = legal[c % len(legal)]
        moves.append(move)
        board.push(move)
    return board, moves


def _san_line(choices):
    board, moves = _play(choices)
    return chess.Board().variation_san(moves)


def _fen(args):
    choices, separator, counters = args
    board, _ = _play(choices)
    fen = board.fen() if counters else board.epd()
    return fen.replace(" ", separator)


schemathesis.openapi.format("fen", st.tuples(_choices, st.sampled_from([" ", "_"]), st.booleans()).map(_fen))
schemathesis.openapi.format("san-line", _choices.map(_san_line))
schemathesis.openapi.format(
    "uci-line", _choices.map(lambda c: ",".join(m.uci() for m in _play(c)[1]))
)


@schemathesis.hook
def map_query(ctx, query):
    """`play` must be legal from `fen`: replay the generated choices from that position."""
    if not query or "play" not in query or "fen" not in query:
        return query
    try:
        board = chess.Board(query["fen"].replace("_", " "))
    except ValueError:
        return query
    start, _ = _play([], chess.Board())
    count = len([p for p in str(query["play"]).split(",") if p])
    _, moves = _play(list(range(count)), board)
    query["play"] = ",".join(m.uci() for m in moves)
    return query


@schemathesis.deserializer("application/x-ndjson")
def _ndjson(ctx, response):
    """GET /player's stream: the schema describes each line; okb sends exactly one."""
    lines = [line for line in response.content.decode("utf-8").splitlines() if line.strip()]
    if len(lines) != 1:
        raise ValueError(f"expected one NDJSON line, got {len(lines)}")
    return json.loads(lines[0])
