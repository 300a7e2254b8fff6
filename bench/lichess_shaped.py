#!/usr/bin/env python3
"""Writes a Lichess-shaped PGN dump for the counting benchmarks (bench/run count).

Real games, written the way a 2024–2026 Lichess monthly dump writes them: the 454,278
master games (../shared/corpus/masters) and the 5,297 Lichess games of January 2013, each
with Lichess's 17 tags (a unique Site, both ratings, TimeControl, ECO, Opening,
Termination), every move on one line followed by a `{ [%clk h:mm:ss] }` comment, and about
6 % of the games also carrying `[%eval ...]` comments (as in the real dumps). The games are
cycled until the text reaches the asked size, each pass with other Sites and ratings, so
the positions are as diverse as the real games are (hundreds of thousands of distinct
pairs) and the file is about 2 KB a game, as a month is.

usage: bench/lichess_shaped.py OUT.pgn MIB
"""
import glob, os, random, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
LICHESS = os.path.join(SHARED, "corpus", "lichess", "lichess_db_standard_rated_2013-01.first5297.pgn")

MOVE_NUMBER = re.compile(r"^\d+\.(\.\.)?")
RESULTS = {"1-0", "0-1", "1/2-1/2", "*"}
SPEEDS = [("Rated Bullet game", "60+0"), ("Rated Blitz game", "180+0"), ("Rated Blitz game", "300+3"),
          ("Rated Rapid game", "600+5"), ("Rated Classical game", "1800+20")]


def games_of(text):
    """(moves, result) of each game of a PGN text: SAN tokens only (comments, NAGs,
    variations and move numbers dropped)."""
    text = text.replace("\r\n", "\n")
    text = re.sub(r"\{[^}]*\}", " ", text)
    for block in re.split(r"\n\s*\n(?=\[)", text):
        parts = re.split(r"\n\s*\n", block, maxsplit=1)
        if len(parts) < 2:
            continue
        movetext = parts[1]
        while "(" in movetext:
            stripped = re.sub(r"\([^()]*\)", " ", movetext)
            if stripped == movetext:
                break
            movetext = stripped
        moves, result = [], "*"
        for token in movetext.split():
            if token in RESULTS:
                result = token
                continue
            token = MOVE_NUMBER.sub("", token)
            if token and not token.startswith("$") and token[0].isalpha():
                moves.append(token)
        if moves:
            yield moves, result


def sources():
    """Every source game, masters first."""
    out = []
    for path in sorted(glob.glob(os.path.join(SHARED, "corpus", "masters", "*.pgn.zst"))):
        text = subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout.decode("latin-1")
        out.extend(games_of(text))
    out.extend(games_of(open(LICHESS, encoding="utf-8").read()))
    return out


def clock(seconds):
    return f"{seconds // 3600}:{seconds // 60 % 60:02}:{seconds % 60:02}"


def lichess_game(moves, result, index, rng):
    event, tc = SPEEDS[index % len(SPEEDS)]
    base = int(tc.split("+")[0])
    white, black = rng.randint(800, 2900), rng.randint(800, 2900)
    evals = rng.random() < 0.06
    site = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
    tags = [("Event", event), ("Site", f"https://lichess.org/{site}"), ("Date", "2026.10.01"), ("Round", "-"),
            ("White", f"player{rng.randrange(10**7)}"), ("Black", f"player{rng.randrange(10**7)}"),
            ("Result", result), ("UTCDate", "2026.10.01"), ("UTCTime", f"{index // 3600 % 24:02}:{index // 60 % 60:02}:{index % 60:02}"),
            ("WhiteElo", str(white)), ("BlackElo", str(black)), ("WhiteRatingDiff", "+5"), ("BlackRatingDiff", "-5"),
            ("ECO", "B01"), ("Opening", "Scandinavian Defense"), ("TimeControl", tc), ("Termination", "Normal")]
    head = "".join(f'[{k} "{v}"]\n' for k, v in tags)
    clocks = [base, base]
    words = []
    for ply, san in enumerate(moves):
        side = ply % 2
        clocks[side] = max(0, clocks[side] - rng.randint(0, 9))
        number = f"{ply // 2 + 1}. " if side == 0 else f"{ply // 2 + 1}... "
        comment = f"[%eval {rng.uniform(-3, 3):.2f}] [%clk {clock(clocks[side])}]" if evals else f"[%clk {clock(clocks[side])}]"
        words.append(f"{number}{san} {{ {comment} }}")
    return f"{head}\n{' '.join(words)} {result}\n\n"


def main():
    out, mib = sys.argv[1], int(sys.argv[2])
    target = mib << 20
    rng = random.Random(20261127)
    games = sources()
    written, index = 0, 0
    with open(out, "w", encoding="utf-8") as f:
        while written < target:
            moves, result = games[index % len(games)]
            text = lichess_game(moves, result, index, rng)
            f.write(text)
            written += len(text.encode())
            index += 1
    print(f"{out}: {index} games, {written} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
