"""Checks okb's repertoire exports with python-chess.

Usage: check_repertoire_exports.py REPERTOIRE.pgn EXPORTED.pgn CARDS.csv BOOK.bin
       check_repertoire_exports.py book REPERTOIRE.pgn ANSWER.json

- the exported PGN reaches exactly the positions of the repertoire (by EPD);
- every card's answer moves are legal at its FEN, and the cards are the positions where
  the repertoire moves;
- the Polyglot book (read by python-chess) holds, at each card's position, exactly the
  card's moves;
- `book`: the `book` of a `GET /repertoire/{name}` answer lists exactly the positions of
  the repertoire with moves, each with exactly its moves (UCI).
"""
import csv
import sys

import chess
import chess.pgn
import chess.polyglot


def positions(path):
    """epd -> set of SAN moves played from it, over every chapter and variation."""
    out = {}

    def walk(node, board):
        out.setdefault(board.epd(), set())
        for child in node.variations:
            out[board.epd()].add(board.san(child.move))
            board.push(child.move)
            walk(child, board)
            board.pop()

    with open(path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            assert not game.errors, game.errors
            walk(game, game.board())
    return out


def check_book(source, answer_path):
    """The answer's book against the repertoire's positions and moves."""
    import json

    want = {}
    for epd, sans in positions(source).items():
        if sans:
            board = chess.Board(epd + " 0 1")
            want[epd] = sorted(board.parse_san(s).uci() for s in sans)
    got = {b["epd"]: sorted(b["moves"]) for b in json.load(open(answer_path))["book"]}
    problems = [f"{epd}: repertoire {want.get(epd)}, answer {got.get(epd)}" for epd in sorted(set(want) | set(got)) if want.get(epd) != got.get(epd)]
    print("\n".join(problems) or f"book agrees ({len(got)} positions)")
    sys.exit(1 if problems else 0)


def main():
    if sys.argv[1] == "book":
        check_book(sys.argv[2], sys.argv[3])
    source, exported, cards_file, book = sys.argv[1:]
    ours, theirs = positions(source), positions(exported)
    assert set(ours) == set(theirs), f"positions differ: {len(set(ours) ^ set(theirs))}"
    # Merged transpositions: the export's moves from a position are all the file's moves.
    for epd in ours:
        assert ours[epd] == theirs[epd], (epd, ours[epd], theirs[epd])
    rows = [r for r in csv.reader(l for l in open(cards_file, encoding="utf-8") if not l.startswith("#"))]
    color = chess.WHITE if rows[0][0].startswith("White") else chess.BLACK
    mine = {epd for epd, moves in ours.items() if moves and chess.Board(epd + " 0 1").turn == color}
    assert {r[2] for r in rows} == mine, "one card per position where the repertoire moves"
    with chess.polyglot.open_reader(book) as reader:
        for front, back, epd, tags in rows:
            board = chess.Board(epd + " 0 1")
            answer = set(back.split(" / "))
            assert answer == ours[epd], (front, answer, ours[epd])
            in_book = {board.san(e.move) for e in reader.find_all(board)}
            assert in_book == answer, (front, in_book, answer)
    print(f"{len(ours)} positions, {len(rows)} cards, book agrees")


main()
