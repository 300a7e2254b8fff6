"""Independent check of okb's repertoire gaps and coverage, with python-chess.

Usage: check_repertoire.py STORE.sqlite REPERTOIRE.pgn COLOR MIN_PROBABILITY SCOPE GAPS.json COVERAGE.json

Reads the repertoire with python-chess's PGN reader (every variation), merges positions
by python-chess's EPD (legal en passant), takes the knowledge base's move counts from the
built store (node_children), spreads opponents' probability ply by ply and lists the
unanswered replies met with at least MIN_PROBABILITY, then compares with okb's files.
SCOPE is `infer` (a Black repertoire covers the first moves it answers), `all`, or lines
of SAN separated by `;`: along them, only their opponent moves are followed, in their
shares of each other. Prints a summary; exits 1 on a difference.
"""
import json
import sqlite3
import sys
from collections import defaultdict

import chess
import chess.pgn


def repertoire(path):
    """epd -> (white to move, the distinct child epds)."""
    nodes = {}

    def add(board):
        epd = board.epd()
        if epd not in nodes:
            nodes[epd] = (board.turn == chess.WHITE, [])
        return epd

    def walk(game_node, board):
        here = add(board)
        for child in game_node.variations:
            board.push(child.move)
            there = add(board)
            if there not in nodes[here][1]:
                nodes[here][1].append(there)
            walk(child, board)
            board.pop()

    with open(path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            if game.errors:
                raise SystemExit(f"python-chess could not read a chapter: {game.errors}")
            walk(game, game.board())
    return nodes


def after(board, move):
    board.push(move)
    epd = board.epd()
    board.pop()
    return epd


def knowledge_base(store):
    db = sqlite3.connect(store)
    games = dict(db.execute("SELECT position_key, game_count FROM opening_nodes"))
    key_of = dict(db.execute("SELECT node_id, position_key FROM opening_nodes"))
    edges = defaultdict(list)
    for parent, child, san, n, w, d, b in db.execute(
        "SELECT parent_id, child_id, move_san, game_count, white_wins, draws, black_wins FROM node_children"
    ):
        edges[key_of[parent]].append((key_of[child], san, n, w, d, b))
    return games, edges


def scope_of(scope, nodes, start, mine_white):
    """epd -> the opponent moves (SAN) in scope there."""
    allowed = defaultdict(set)
    if scope == "infer":
        if not mine_white:
            board = chess.Board()
            for child in nodes[start][1]:
                for move in board.legal_moves:
                    board.push(move)
                    if board.epd() == child:
                        board.pop()
                        allowed[start].add(board.san(move))
                    else:
                        board.pop()
        return allowed
    if scope == "all":
        return allowed
    for line in scope.split(";"):
        board = chess.Board()
        for token in line.split():
            san = token.lstrip("0123456789").lstrip(".")
            if not san:
                continue
            if (board.turn == chess.WHITE) != mine_white:
                allowed[board.epd()].add(san)
            board.push_san(san)
    return allowed


def main():
    store, pgn, color, min_probability, scope, gaps_file, coverage_file = sys.argv[1:]
    mine_white = color == "white"
    min_probability = float(min_probability)
    nodes = repertoire(pgn)
    games, edges = knowledge_base(store)
    start = chess.Board().epd()
    allowed = scope_of(scope, nodes, start, mine_white)

    def replies(epd):
        """The replies in scope at epd and the games they are shares of (None: unknown)."""
        if games.get(epd, 0) == 0 or not edges[epd]:
            return None
        if epd not in allowed:
            return edges[epd], games[epd]
        kept = [e for e in edges[epd] if e[1] in allowed[epd]]
        total = sum(e[2] for e in kept)
        return (kept, total) if total > 0 else None
    okb_cov = json.load(open(coverage_file))["coverage"]
    plies = [p["ply"] for p in okb_cov]

    def mine(epd):
        return nodes[epd][0] == mine_white

    reach = defaultdict(float)
    reach[start] = 1.0
    current = {start: 1.0}
    left = ended = 0.0
    coverage = []
    for ply in range(1, max(plies) + 1):
        nxt = defaultdict(float)
        for epd, mass in current.items():
            children = nodes[epd][1]
            known = None if mine(epd) else replies(epd)
            if not children:
                ended += mass
            elif known is None:
                if not mine(epd) and epd in allowed:
                    board = chess.Board(epd + " 0 1")
                    inside = [c for c in children if any(board.san(m) in allowed[epd] and after(board, m) == c for m in board.legal_moves)]
                    children = inside or children
                for c in children:
                    nxt[c] += mass / len(children)
            else:
                kept, total = known
                stayed = 0.0
                for child, _, n, *_ in kept:
                    if child in nodes:
                        nxt[child] += mass * n / total
                        stayed += n / total
                left += mass * (1 - stayed)
        for epd, mass in nxt.items():
            reach[epd] += mass
        current = nxt
        if ply in plies:
            coverage.append((ply, sum(current.values()), left, ended))

    gaps = []
    for epd, (_, children) in nodes.items():
        known = None if mine(epd) else replies(epd)
        if mine(epd) or not children or reach[epd] == 0 or known is None:
            continue
        kept, total = known
        for child, san, n, w, d, b in kept:
            share = n / total
            answered = child in nodes and nodes[child][1]
            if reach[epd] * share >= min_probability and not answered and n > 0:
                gaps.append((reach[epd] * share, epd, san, n, (w if mine_white else b) + d / 2))

    problems = []
    for (ply, inside, left_, ended_), theirs in zip(coverage, okb_cov):
        for name, ours in (("inside", inside), ("left", left_), ("ended", ended_)):
            if abs(ours - theirs[name]) > 1e-9:
                problems.append(f"coverage at ply {ply}: {name} {ours} (python-chess) != {theirs[name]} (okb)")
    okb_gaps = json.load(open(gaps_file))["gaps"]
    ours = {(epd, san): (p, n, score / n) for p, epd, san, n, score in gaps}
    theirs = {(g["epd"], g["reply"]): (g["probability"], g["games"], g["score"]) for g in okb_gaps}
    if ours.keys() != theirs.keys():
        problems.append(f"gaps differ: only python-chess {sorted(ours.keys() - theirs.keys())[:5]}, only okb {sorted(theirs.keys() - ours.keys())[:5]}")
    for key in ours.keys() & theirs.keys():
        (p, n, s), (q, m, t) = ours[key], theirs[key]
        if abs(p - q) > 1e-9 or n != m or abs(s - t) > 1e-9:
            problems.append(f"gap {key}: python-chess {ours[key]} != okb {theirs[key]}")
    ranked = [g["probability"] for g in okb_gaps]
    if ranked != sorted(ranked, reverse=True):
        problems.append("okb's gaps are not ranked by probability")
    print(f"{len(nodes)} positions, {len(gaps)} gaps, coverage " + ", ".join(f"{p}: {i:.4f}" for p, i, _, _ in coverage))
    if problems:
        print("\n".join(problems))
        sys.exit(1)


main()
