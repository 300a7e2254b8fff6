#!/usr/bin/env python3
"""A large synthetic okb store for bench/serve-large: a built store plus N made-up nodes.

    bench/large_store.py FROM.sqlite N OUT.sqlite

Copies the store FROM (the masters knowledge base) to OUT and adds N nodes, each a legal
position no game reaches: the two kings on e1 and e8 and, on each file, no pawn or one
White pawn on rank 2, 3 or 4 and no pawn or one Black pawn on rank 7, 6 or 5 (16 states
a file, so 16^8 positions; none gives check). Node i's columns other than its id,
position and FEN are those of one real node with names and engine lines, so answers are
of a real size; its children are nodes 2i+1 and 2i+2 (a binary tree), with that node's
first move counts. The indexes are built after the rows, as okb's store step does.
Beside OUT goes a `manifest.json` with the store's BLAKE3 (Python's `blake3` package), as
a make writes it, so that `okb serve` need not hash the whole file at start-up.
`fen(i)` gives node i's FEN, for the benchmark's requests.
"""
import json
import os, shutil, sqlite3, sys, time

# Per 4-file group state (16 bits: 4 bits a file), the six rank masks of those files:
# White pawns on ranks 2, 3, 4, Black pawns on ranks 7, 6, 5.
def _group_masks(value):
    masks = [0] * 6
    for f in range(4):
        d = value >> (4 * f) & 15
        white, black = d & 3, d >> 2
        if white:
            masks[white - 1] |= 1 << f
        if black:
            masks[2 + black] |= 1 << f
    return masks

_GROUPS = [_group_masks(v) for v in range(1 << 16)]


def _rank_text(mask, piece):
    text, empty = "", 0
    for f in range(8):
        if mask >> f & 1:
            text += (str(empty) if empty else "") + piece
            empty = 0
        else:
            empty += 1
    return text + (str(empty) if empty else "")

_WHITE = [_rank_text(m, "P") for m in range(256)]
_BLACK = [_rank_text(m, "p") for m in range(256)]


def epd(i):
    """Node i's position identity (placement, side, castling, en passant)."""
    lo, hi = _GROUPS[i & 0xFFFF], _GROUPS[i >> 16 & 0xFFFF]
    m = [lo[k] | hi[k] << 4 for k in range(6)]
    ranks = ["4k3", _BLACK[m[3]], _BLACK[m[4]], _BLACK[m[5]], _WHITE[m[2]], _WHITE[m[1]], _WHITE[m[0]], "4K3"]
    return "/".join(ranks) + " w - -"


def fen(i):
    """Node i's FEN."""
    return epd(i) + " 0 1"


def node_id(i):
    return f"synthetic-{i:012d}"


def generate(source, n, out):
    tmp = out + ".tmp"
    shutil.copyfile(source, tmp)
    conn = sqlite3.connect(tmp, isolation_level=None)
    conn.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;")
    columns = [r[1] for r in conn.execute("PRAGMA table_info(opening_nodes)")]
    # A node with names, engine lines and several moves: answers of a real size.
    template = conn.execute(
        "SELECT * FROM opening_nodes WHERE stockfish_lines IS NOT NULL AND opening_name IS NOT NULL "
        "ORDER BY game_count DESC LIMIT 1 OFFSET 20").fetchone()
    edge = conn.execute("SELECT game_count, white_wins, draws, black_wins, avg_rating FROM node_children "
                        "WHERE parent_id = ? ORDER BY rank LIMIT 1", (template[0],)).fetchone()
    at = {name: k for k, name in enumerate(columns)}
    conn.executescript("DROP INDEX opening_nodes_position; DROP INDEX node_children_child;")
    conn.execute("BEGIN")
    marks = ",".join("?" * len(columns))

    def rows():
        row = list(template)
        for i in range(n):
            row[at["node_id"]], row[at["position_key"]], row[at["fen"]] = node_id(i), epd(i), fen(i)
            yield row

    def edges():
        for i in range(n):
            for rank, (child, san, uci) in enumerate(((2 * i + 1, "a3", "a2a3"), (2 * i + 2, "h3", "h2h3"))):
                if child < n:
                    yield (node_id(i), node_id(child), san, uci, rank, *edge)

    conn.executemany(f"INSERT INTO opening_nodes VALUES ({marks})", rows())
    conn.executemany("INSERT INTO node_children (parent_id, child_id, move_san, move_uci, rank, game_count, "
                     "white_wins, draws, black_wins, avg_rating) VALUES (?,?,?,?,?,?,?,?,?,?)", edges())
    if conn.in_transaction:
        conn.execute("COMMIT")
    conn.executescript("CREATE UNIQUE INDEX opening_nodes_position ON opening_nodes (position_key);"
                       "CREATE INDEX node_children_child ON node_children (child_id);")
    conn.close()
    os.replace(tmp, out)
    write_manifest(out)


def write_manifest(store):
    """manifest.json beside `store` with its hash, as a make's release manifest has it."""
    import blake3
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    hasher.update_mmap(store)
    entry = {"path": os.path.basename(store), "step": "store", "blake3": hasher.hexdigest(), "bytes": os.path.getsize(store)}
    with open(os.path.join(os.path.dirname(os.path.abspath(store)), "manifest.json"), "w") as f:
        json.dump({"store": entry, "outputs": []}, f)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    source, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    started = time.perf_counter()
    generate(source, n, out)
    print(f"{out}: {n} synthetic nodes added in {time.perf_counter() - started:.1f} s, {os.path.getsize(out) / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
