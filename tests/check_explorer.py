#!/usr/bin/env python3
"""Independent checks of okb serve's explorer answers, run by tests/it/serve_explorer.rs.

  check_explorer.py counts MAX_PLY QUERIES OUT PGN...
      Counts, with python-chess, the games of the PGN files (.zst read through `zstd -dc`)
      for each query of QUERIES ([{"play": "e2e4,c7c5", "years": [a, b] | null,
      "months": ["2013-01", "2013-01"] | null, "speeds": [...] | null, "ratings": [...] | null}])
      and writes OUT: per query {"white", "draws", "black", "moves": {uci: [w, d, b]}}.
      The counting rule is okb's (a position once per game, a move once per game and
      position, the first MAX_PLY plies, games with a result), written again from its
      description, not from okb's code.
  check_explorer.py player SURNAME GIVEN QUERIES OUT PGN...
      The player's games as Lichess's /player counts them, written again from its
      description: the games whose White (color "white") or Black tag names SURNAME with
      first name GIVEN or its initial, with a result and a known year, standard, legal
      for their first 50 plies; a game counts at a position where it played a move within
      those plies (the last one, when it came back). QUERIES is [{"play", "color",
      "months": [a, b] | null, "speeds": [...] | null}] (a game without TimeControl is
      classical; one whose month is unknown counts in January); OUT gets per query
      {"white", "draws", "black", "moves": {uci: [w, d, b, rated opponents, rating sum]}}.
  check_explorer.py schema SCHEMA MANIFEST
      Validates answers against definitions of SCHEMA ($defs); MANIFEST is
      [{"file": ..., "def": "OpeningExplorerMasters"}].
  check_explorer.py pgn MANIFEST
      For each {"file": PGN, "play": line, "uci": move, "white": name, "black": name,
      "winner": "white" | "black" | null}: the game parses, names and result match, and it
      reaches the position after `play` and plays `uci` there.

Prints one line per problem and exits 1 if there is any.
"""

import io
import re
import json
import subprocess
import sys

import chess
import chess.pgn

SPEEDS = ["ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence"]
GROUPS = [0, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2500]


def key(board):
    return board.epd(en_passant="legal")


def number(text, low, high):
    text = text.strip()
    if not text.isdigit() or len(text) > 18:
        return None
    n = int(text)
    return n if low <= n <= high else None


def date(headers):
    """(year, month or None) from Date, else UTCDate; None when the year is unknown."""
    for tag in ("Date", "UTCDate"):
        value = headers.get(tag)
        if not value:
            continue
        parts = value.strip().replace("-", ".").replace("/", ".").split(".")
        year = number(parts[0], 0, 9999)
        if year is None:
            continue
        month = None
        ok = True
        for i, (low, high) in enumerate([(1, 12), (1, 31)]):
            if len(parts) > i + 1 and not set(parts[i + 1]) <= {"?"}:
                v = number(parts[i + 1], low, high)
                if v is None:
                    ok = False
                elif i == 0:
                    month = v
        if ok:
            return year, month
    return None


def speed(headers):
    tc = headers.get("TimeControl")
    if tc is None:
        return None
    tc = tc.strip()
    if tc == "-":
        return "correspondence"
    base, _, inc = tc.partition("+")
    base, inc = number(base, 0, 10**18), number(inc, 0, 10**18) if inc else 0
    if base is None or inc is None:
        return None
    t = base + 40 * inc
    for limit, name in [(30, "ultraBullet"), (180, "bullet"), (480, "blitz"), (1500, "rapid"), (21600, "classical")]:
        if t < limit:
            return name
    return "correspondence"


def admitted(q, headers):
    when = date(headers)
    sp = speed(headers)
    if q.get("years"):
        a, b = q["years"]
        if when is None or not a <= when[0] <= b:
            return False
    if q.get("months"):
        a, b = q["months"]
        if when is None:
            return False
        # Games without a TimeControl keep their year only (January for month filters).
        month = when[1] if (sp is not None and when[1] is not None) else 1
        if not a <= f"{when[0]:04}-{month:02}" <= b:
            return False
    if q.get("speeds") is not None and sp not in q["speeds"]:
        return False
    if q.get("ratings") is not None:
        w, b = number(headers.get("WhiteElo", ""), 1, 4000), number(headers.get("BlackElo", ""), 1, 4000)
        if sp is None or w is None or b is None:
            return False
        group = max(g for g in GROUPS if (w + b) // 2 >= g)
        if group not in q["ratings"]:
            return False
    return True


def games(paths):
    for path in paths:
        if path.endswith(".zst"):
            text = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
        else:
            text = open(path, "rb").read()
        text = text.decode("utf-8", errors="replace").replace("\r\n", "\n")
        # PGN readers differ on blank lines between tags and movetext: python-chess ends
        # the game at the second one, pgn-reader (okb's) does not. Read them as one game.
        text = re.sub(r"(\[[^\n]*\]\n)\n\n+(?=[^\[\n])", r"\1\n", text)
        stream = io.StringIO(text)
        while True:
            game = chess.pgn.read_game(stream)
            if game is None:
                break
            yield game


def counts(max_ply, queries_path, out_path, paths):
    queries = json.load(open(queries_path))
    targets = {}
    for i, q in enumerate(queries):
        board = chess.Board()
        for uci in filter(None, q["play"].split(",")):
            board.push_uci(uci)
        targets.setdefault(key(board), []).append(i)
    results = [{"white": 0, "draws": 0, "black": 0, "moves": {}} for _ in queries]
    for game in games(paths):
        h = game.headers
        result = h.get("Result", "*")
        if result not in ("1-0", "0-1", "1/2-1/2"):
            continue
        if h.get("Variant", "standard").lower() not in ("standard", "chess", "from position", ""):
            continue
        if "FEN" in h and not h["FEN"].startswith("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"):
            continue
        if "BOT" in (h.get("WhiteTitle", "").upper(), h.get("BlackTitle", "").upper()):
            continue
        if game.errors:
            continue
        field = {"1-0": "white", "0-1": "black", "1/2-1/2": "draws"}[result]
        board = game.board()
        keys, moves = [key(board)], []
        for move in game.mainline_moves():
            if len(moves) >= max_ply:
                break
            moves.append(move.uci())
            board.push(move)
            keys.append(key(board))
        seen_moves = set()
        for i, k in enumerate(keys):
            first = k not in keys[:i]
            pair = (k, moves[i]) if i < len(moves) else None
            new_pair = pair is not None and pair not in seen_moves
            if pair is not None:
                seen_moves.add(pair)
            for qi in targets.get(k, []):
                if not admitted(queries[qi], h):
                    continue
                r = results[qi]
                if first:
                    r[field] += 1
                if new_pair:
                    c = r["moves"].setdefault(moves[i], [0, 0, 0])
                    c[["white", "draws", "black"].index(field)] += 1
    json.dump(results, open(out_path, "w"))
    return []


def names_player(tag, surname, given):
    """Same surname; first names equal, or one is the other's initial."""
    parts = [w for w in re.split(r"[,.\s]+", tag.lower()) if w]
    if len(parts) < 2 or parts[0] != surname.lower():
        return False
    a, b = parts[1], given.lower()
    return a == b or (len(a) == 1 and b.startswith(a)) or (len(b) == 1 and a.startswith(b))


def player(surname, given, queries_path, out_path, paths):
    queries = json.load(open(queries_path))
    out = [{"white": 0, "draws": 0, "black": 0, "moves": {}} for _ in queries]
    targets = []
    for q in queries:
        board = chess.Board()
        for uci in filter(None, q["play"].split(",")):
            board.push_uci(uci)
        targets.append(key(board))
    for game in games(paths):
        h = game.headers
        result = {"1-0": 0, "1/2-1/2": 1, "0-1": 2}.get(h.get("Result"))
        when = date(h)
        if result is None or when is None or when[0] == 0 or "FEN" in h:
            continue
        moves = list(game.mainline_moves())
        if game.errors and len(moves) < 50:
            continue
        # The last move played from each position in the first 50 plies.
        board, last = chess.Board(), {}
        for move in moves[:50]:
            last[key(board)] = move.uci()
            board.push(move)
        month = f"{when[0]:04}-{when[1] or 1:02}"
        for q, target, o in zip(queries, targets, out):
            if not names_player(h.get(q["color"].capitalize(), ""), surname, given) or target not in last:
                continue
            if q.get("months") and not q["months"][0] <= month <= q["months"][1]:
                continue
            if q.get("speeds") is not None and (speed(h) or "classical") not in q["speeds"]:
                continue
            o[["white", "draws", "black"][result]] += 1
            m = o["moves"].setdefault(last[target], [0, 0, 0, 0, 0])
            m[result] += 1
            opponent = number(h.get("BlackElo" if q["color"] == "white" else "WhiteElo", ""), 1, 4000)
            if opponent is not None:
                m[3] += 1
                m[4] += opponent
    json.dump(out, open(out_path, "w"))
    return []


def schema(schema_path, manifest_path):
    from jsonschema import Draft202012Validator

    doc = json.load(open(schema_path))
    problems = []
    for item in json.load(open(manifest_path)):
        validator = Draft202012Validator({"$ref": f"#/$defs/{item['def']}", "$defs": doc["$defs"]})
        answer = json.load(open(item["file"]))
        for error in validator.iter_errors(answer):
            problems.append(f"{item['file']} ({item['def']}): {error.json_path}: {error.message}")
    return problems


def pgn(manifest_path):
    problems = []
    for item in json.load(open(manifest_path)):
        where = item["file"]
        game = chess.pgn.read_game(io.StringIO(open(where).read()))
        if game is None or game.errors:
            problems.append(f"{where}: does not parse as PGN")
            continue
        h = game.headers
        for side in ("white", "black"):
            if h.get(side.capitalize()) != item[side]:
                problems.append(f"{where}: {side} is {h.get(side.capitalize())!r}, the answer says {item[side]!r}")
        winner = {"1-0": "white", "0-1": "black"}.get(h.get("Result"))
        if winner != item["winner"]:
            problems.append(f"{where}: result {h.get('Result')} but winner {item['winner']}")
        target = chess.Board()
        for uci in filter(None, item["play"].split(",")):
            target.push_uci(uci)
        board = game.board()
        played = None
        for move in game.mainline_moves():
            if key(board) == key(target):
                played = move.uci()
                if played == item["uci"]:
                    break
            board.push(move)
        if played != item["uci"]:
            problems.append(f"{where}: never plays {item['uci']} from the position after {item['play']!r}")
    return problems


MODES = {
    "counts": lambda a: counts(int(a[0]), a[1], a[2], a[3:]),
    "player": lambda a: player(a[0], a[1], a[2], a[3], a[4:]),
    "schema": lambda a: schema(a[0], a[1]),
    "pgn": lambda a: pgn(a[0]),
}

if __name__ == "__main__":
    if sys.argv[1] not in MODES:
        sys.exit(f"unknown mode {sys.argv[1]}")
    found = MODES[sys.argv[1]](sys.argv[2:])
    print("\n".join(found or ["ok"]))
    sys.exit(1 if found else 0)
