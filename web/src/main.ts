// okb's opening explorer: a board (chessground, rules by chessops) over okb serve's own
// JSON API. The line lives in the URL (?moves=e4+c5+Nf3), so a position can be shared,
// reloaded, and walked with back/forward.
import { Chessground } from 'chessground';
import type { Api } from 'chessground/api';
import type { Key } from 'chessground/types';
import { Chess } from 'chessops/chess';
import { chessgroundDests } from 'chessops/compat';
import { makeFen } from 'chessops/fen';
import { makeSan, makeSanAndPlay, parseSan } from 'chessops/san';
import { parseSquare, parseUci } from 'chessops/util';

interface Child {
  node_id: string; pgn_move: string; uci: string; game_count: number;
  white_win_pct: number | null; draw_pct: number | null; avg_rating: number | null;
  opening_name: string | null; variation_name: string | null;
  stockfish_eval: number | null; is_dubious: boolean | null;
  cp_loss: number | null; win_chance_loss: number | null;
}
interface EngineLine { multipv: number; depth: number; eval: number; mate: number | null; pv_san: string[] }
interface Node {
  node_id: string; fen: string; moves: string; eco_code: string | null;
  opening_name: string | null; variation_name: string | null; name_inherited: boolean;
  aliases: Record<string, string>; children: Child[];
  transpositions: { node_id: string; moves: string; opening_name: string | null }[];
  game_count: number; white_win_pct: number | null; draw_pct: number | null;
  stockfish_eval: number | null; stockfish_depth: number | null; best_move: string | null;
  stockfish_lines: EngineLine[] | null; is_dubious: boolean | null; is_busted: boolean | null;
  eval_source: string | null; eval_nodes: number | null;
  resulting_structure: string | null; structure_confidence: string | null;
}
interface TreeNode { san: string; name: string | null; eco: string | null; games: number; children: TreeNode[] }
interface Gap { line: string; epd: string; reply: string; uci: string; games: number; probability: number; reach: number; share: number; score: number }
interface Report {
  repertoire: string; color: 'white' | 'black'; positions: number; gaps: Gap[];
  coverage: { ply: number; inside: number; left: number; ended: number }[]; book: { epd: string; moves: string[] }[];
}
interface PlayerMove { uci: string; san: string; white: number; draws: number; black: number }
/** What the URL asks to mark: a repertoire (?rep=NAME) and an opponent (?player=NAME, ?pcolor=white|black). */
interface Marks { report: Report | null; book: Map<string, Set<string>>; gaps: Map<string, Gap[]>; player: Map<string, PlayerMove> | null }

const $ = (id: string) => document.getElementById(id)!;
const cache = new Map<string, Promise<any>>();
const getJson = (path: string): Promise<any> => {
  if (!cache.has(path)) cache.set(path, fetch(path).then(r => (r.ok ? r.json() : null)));
  return cache.get(path)!;
};
const texts = new Map<string, Promise<string | null>>();
/** An NDJSON answer's text (its one line), fetched once. */
const getText = (path: string): Promise<string | null> => {
  if (!texts.has(path)) texts.set(path, fetch(path).then(r => (r.ok ? r.text() : null)));
  return texts.get(path)!;
};
const esc = (s: string) => s.replace(/[&<>"]/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const fullName = (o: { opening_name: string | null; variation_name: string | null }) =>
  o.opening_name ? o.opening_name + (o.variation_name ? `: ${o.variation_name}` : '') : '';
const evalText = (cp: number | null) => (cp === null ? '' : (cp > 0 ? '+' : '') + (cp / 100).toFixed(2));

/** Lichess's marks by the winning chances a move loses against the best move (lila's
 * Advice: 0.1, 0.2, 0.3 on its −1…+1 scale, so 5, 10, 15 points of the percentage). */
const MARKS: [number, string, string][] = [[15, '??', 'blunder'], [10, '?', 'mistake'], [5, '?!', 'inaccuracy']];
/** A move's mark, by what it loses (none without both evaluations). */
function judgement(c: Child) {
  const loss = c.win_chance_loss;
  const mark = loss === null ? undefined : MARKS.find(([least]) => loss >= least);
  if (!mark) return '';
  const why = `${mark[2]}: loses ${loss!.toFixed(1)} points of winning chances (${c.cp_loss} cp) against the best move here`;
  return ` <span class="flag" data-mark="${mark[2]}" title="${why}">${mark[1]}</span>`;
}
/** How far the engine annotates (`max_ply` of the pipeline's [engine]; undefined: not said, null: no limit). */
let maxPly: Promise<number | null | undefined> | null = null;
const engineReach = () => (maxPly ??= fetch('/', { headers: { accept: 'application/json' } })
  .then(r => (r.ok ? r.json() : null)).then(m => m?.engine?.max_ply).catch(() => undefined));

let line: string[] = [];
const params = new URLSearchParams(location.search);
const repName = params.get('rep'), playerName = params.get('player');
const epdOf = (fen: string) => fen.split(' ').slice(0, 4).join(' ');
const pct = (x: number) => (x * 100).toFixed(1) + '%';
const games = (m: PlayerMove) => m.white + m.draws + m.black;

/** The repertoire's report, indexed by position (fetched once). */
async function report(): Promise<Pick<Marks, 'report' | 'book' | 'gaps'>> {
  const r: Report | null = repName ? await getJson(`/repertoire/${encodeURIComponent(repName)}`) : null;
  const book = new Map((r?.book ?? []).map(b => [b.epd, new Set(b.moves)]));
  const gaps = new Map<string, Gap[]>();
  for (const g of r?.gaps ?? []) gaps.set(g.epd, [...(gaps.get(g.epd) ?? []), g]);
  return { report: r, book, gaps };
}

/** The opponent's moves at `fen` from /player (their colour: ?pcolor, else the repertoire's other side). */
async function opponent(fen: string, r: Report | null): Promise<Map<string, PlayerMove> | null> {
  if (!playerName) return null;
  const color = params.get('pcolor') ?? (r?.color === 'white' ? 'black' : 'white');
  const q = new URLSearchParams({ player: playerName, color, fen, recentGames: '0' });
  const answer = await getText(`/player?${q}`);
  return new Map((answer ? JSON.parse(answer).moves : []).map((m: PlayerMove) => [m.uci, m]));
}
let board: Api;
let asked = 0; // performance.now() of the last navigation, for the render time below

/** The position after `moves` (SAN), or null when a move is illegal. */
function play(moves: string[]): Chess | null {
  const pos = Chess.default();
  for (const san of moves) {
    const move = parseSan(pos, san);
    if (!move) return null;
    pos.play(move);
  }
  return pos;
}

/** SAN tokens of a numbered movetext ("1. e4 c5 2. Nf3"). */
const tokens = (movetext: string) => movetext.split(/\s+/).filter(t => t && !/^\d+\.+$/.test(t));

function go(moves: string[], push = true) {
  if (!play(moves)) return;
  asked = performance.now();
  line = moves;
  if (push) {
    const keep = new URLSearchParams(params);
    keep.delete('moves');
    const rest = keep.toString();
    const query = [moves.length ? `moves=${moves.map(encodeURIComponent).join('+')}` : '', rest].filter(Boolean).join('&');
    history.pushState(null, '', query ? `?${query}` : location.pathname);
  }
  render();
}

function onBoardMove(orig: Key, dest: Key) {
  const pos = play(line)!;
  const from = parseSquare(orig)!, to = parseSquare(dest)!;
  const promotes = pos.board.getRole(from) === 'pawn' && (dest[1] === '8' || dest[1] === '1');
  const move = { from, to, promotion: promotes ? ('queen' as const) : undefined };
  if (!pos.isLegal(move)) return render();
  go([...line, makeSanAndPlay(pos, move)]);
}

async function render() {
  const pos = play(line)!;
  const fen = makeFen(pos.toSetup());
  board.set({
    fen, turnColor: pos.turn, check: pos.isCheck(),
    movable: { color: pos.turn, dests: chessgroundDests(pos), free: false },
    lastMove: undefined,
  });
  document.body.dataset.fen = fen;
  renderCrumbs();
  const [node, rep] = await Promise.all([getJson(`/node/fen/${encodeURIComponent(fen)}`) as Promise<Node | null>, report()]);
  const marks: Marks = { ...rep, player: await opponent(fen, rep.report) };
  if (makeFen(play(line)!.toSetup()) !== fen) return; // a newer move was played meanwhile
  renderMoves(node, marks, pos, await engineReach());
  renderReport(marks.report);
  // Board and table are up to date: the time a move click costs.
  document.body.dataset.renderMs = (performance.now() - asked).toFixed(1);
  await renderInfo(node);
  document.body.dataset.ready = fen;
}

function renderCrumbs() {
  const parts = ['<a data-ply="0">start</a>'];
  line.forEach((san, i) => parts.push(`<a data-ply="${i + 1}">${i % 2 === 0 ? `${i / 2 + 1}. ` : ''}${esc(san)}</a>`));
  $('crumbs').innerHTML = parts.join(' › ');
}

function bar(c: Child) {
  const w = c.white_win_pct ?? 0, d = c.draw_pct ?? 0, b = Math.max(0, 100 - w - d);
  if (!c.game_count) return '';
  return `<div class="bar"><span class="w" style="width:${w}%">${w >= 15 ? w.toFixed(0) + '%' : ''}</span><span class="d" style="width:${d}%">${d >= 15 ? d.toFixed(0) + '%' : ''}</span><span class="b" style="width:${b}%">${b >= 15 ? b.toFixed(0) + '%' : ''}</span></div>`;
}

/** A table row's marks: a prepared move (★), an unanswered reply (gap), the opponent's games. */
function markCells(uci: string, epd: string, marks: Marks) {
  const mine = marks.book.get(epd)?.has(uci) ? ' <span class="rep" title="in the repertoire">★</span>' : '';
  const gap = marks.gaps.get(epd)?.find(g => g.uci === uci);
  const gapText = gap ? ` <span class="gap" title="the repertoire does not answer it: met in ${pct(gap.probability)} of games">gap</span>` : '';
  const theirs = marks.player?.get(uci);
  return { mark: mine + gapText, cls: [mine && 'rep', gap && 'gap'].filter(Boolean).join(' '), opp: marks.player ? `<td class="opp">${theirs ? games(theirs).toLocaleString('en') : ''}</td>` : '' };
}

function renderMoves(node: Node | null, marks: Marks, pos: Chess, reach: number | null | undefined) {
  const epd = epdOf(makeFen(pos.toSetup()));
  const children = node ? [...node.children].sort((a, b) => b.game_count - a.game_count) : [];
  const rows = children.map(c => {
    const m = markCells(c.uci, epd, marks);
    return `<tr data-san="${esc(c.pgn_move)}" data-uci="${c.uci}" class="${m.cls}"><td class="san">${esc(c.pgn_move)}${judgement(c)}${m.mark}</td>` +
      `<td class="games">${c.game_count.toLocaleString('en')}</td><td>${bar(c)}</td>` +
      `<td class="rating">${c.avg_rating ? Math.round(c.avg_rating) : ''}</td><td class="eval"${c.stockfish_eval === null ? ` title="${esc(noEval(line.length + 1, reach))}"` : ''}>${evalText(c.stockfish_eval)}</td>${m.opp}` +
      `<td class="name">${esc(fullName(c))}</td></tr>`;
  });
  // Prepared moves and the opponent's moves the knowledge base does not list here.
  const listed = new Set(children.map(c => c.uci));
  const extra = [...(marks.book.get(epd) ?? []), ...(marks.player?.keys() ?? [])].filter(u => !listed.has(u) && listed.add(u));
  for (const uci of extra) {
    const move = parseUci(uci);
    if (!move || !pos.isLegal(move)) continue;
    const san = makeSan(pos, move), m = markCells(uci, epd, marks);
    rows.push(`<tr data-san="${esc(san)}" data-uci="${uci}" class="${m.cls}"><td class="san">${esc(san)}${m.mark}</td><td class="games">0</td><td></td><td></td><td></td>${m.opp}<td class="name"></td></tr>`);
  }
  if (!rows.length) {
    $('moves').innerHTML = '<p class="none">This position is not in the knowledge base.</p>';
    return;
  }
  const opp = marks.player ? `<th title="${esc(playerName!)}'s games">opponent</th>` : '';
  $('moves').innerHTML = `<table><thead><tr><th>move</th><th>games</th><th>white / draw / black</th><th>rating</th><th>eval</th>${opp}<th>opening</th></tr></thead><tbody>${rows.join('')}</tbody></table>` +
    legend(line.length + 1, reach);
}

/** Why a move's eval cell is empty: the engine's reach (`max_ply`) when the pipeline gives it. */
function noEval(ply: number, reach: number | null | undefined) {
  if (typeof reach === 'number' && ply > reach) return `not evaluated: ply ${ply} is beyond the engine's max_ply (${reach})`;
  return 'not evaluated: the engine skipped this position (its max_ply or min_games) or has not reached it yet';
}

/** What the table's marks mean, and what it leaves empty. */
function legend(ply: number, reach: number | null | undefined) {
  const depth = typeof reach === 'number'
    ? `the engine annotates positions up to ply ${reach} (its <code>max_ply</code>)${ply > reach ? `; these moves reach ply ${ply}, beyond it` : ''}`
    : reach === null ? 'the engine annotates every ply, but may skip rarely played positions (<code>min_games</code>)'
      : 'the engine annotates positions up to its <code>max_ply</code> and from its <code>min_games</code>';
  return '<dl id="legend">' +
    `<dt><span class="flag">?!</span> <span class="flag">?</span> <span class="flag">??</span></dt><dd>inaccuracy, mistake, blunder, as on Lichess: the move loses at least 5, 10 or 15 points of winning chances against the engine's best move in this position (its <code>win_chance_loss</code>).</dd>` +
    '<dt>dubious, loses</dt><dd>the note under the engine lines follows okb\'s stored rule, not the loss: after the move its mover stands at −0.50 (dubious) or −1.50 (loses) or worse.</dd>' +
    '<dt>(i)</dt><dd>an interpolated name: the position lies between named lines of a taxonomy and takes the name of its nearest named ancestor.</dd>' +
    '<dt>0 games</dt><dd>the move is in an opening taxonomy, the repertoire or the opponent\'s games, but no game the knowledge base counted played it.</dd>' +
    `<dt>empty eval</dt><dd>no evaluation: ${depth}.</dd></dl>`;
}

/** The repertoire's coverage by ply and its most likely gaps (links to their lines). */
function renderReport(r: Report | null) {
  if (!r) {
    $('report').innerHTML = repName ? `<p class="none">No repertoire ${esc(repName)} was built.</p>` : '';
    return;
  }
  const coverage = r.coverage.map(c => `<tr><td>${c.ply}</td><td class="inside">${pct(c.inside)}</td><td>${pct(c.left)}</td><td>${pct(c.ended)}</td></tr>`).join('');
  const gaps = r.gaps.slice(0, 10).map(g => `<li><a data-moves="${esc(g.line)}">${esc(g.line)}</a> <small>${pct(g.probability)}, ${g.games.toLocaleString('en')} games</small></li>`).join('');
  $('report').innerHTML = `<h3>Repertoire ${esc(r.repertoire)} (${r.color}, ${r.positions} positions)</h3>` +
    `<table id="coverage"><thead><tr><th>ply</th><th>inside</th><th>left</th><th>ended</th></tr></thead><tbody>${coverage}</tbody></table>` +
    `<h3>Gaps, most likely first (${r.gaps.length})</h3><ol id="gaps">${gaps}</ol>`;
}

async function renderInfo(node: Node | null) {
  if (!node) {
    $('info').innerHTML = '';
    return;
  }
  const html: string[] = [];
  const name = fullName(node);
  html.push(`<h2 id="opening">${node.eco_code ? `<span class="eco">${esc(node.eco_code)}</span> ` : ''}${esc(name || 'Unnamed position')}</h2>`);
  const aliases = Object.entries(node.aliases);
  if (aliases.length) html.push(`<ul class="aliases">${aliases.map(([src, n]) => `<li><b>${esc(src)}</b> ${esc(n)}</li>`).join('')}</ul>`);
  html.push(`<p class="stats">${node.game_count.toLocaleString('en')} games${node.white_win_pct !== null ? `, White ${node.white_win_pct}%, draws ${node.draw_pct}%` : ''}</p>`);
  if (node.stockfish_lines?.length) {
    html.push('<h3>Engine</h3><ol class="engine">' + node.stockfish_lines.map(l =>
      `<li><b>${l.mate !== null ? `#${l.mate}` : evalText(l.eval)}</b> <small>d${l.depth}</small> ${esc(l.pv_san.slice(0, 8).join(' '))}</li>`).join('') + '</ol>');
    if (node.eval_source) html.push(`<p id="eval-source" class="source">depth ${node.stockfish_depth}, ${esc(node.eval_source)}${node.eval_nodes ? `, ${(node.eval_nodes / 1e6).toLocaleString('en', { maximumFractionDigits: 1 })}M nodes` : ''}</p>`);
  }
  // okb's stored rule (the mover at −1.50 / −0.50 or worse), not the table's Lichess marks.
  if (node.is_busted) html.push('<p class="flag">The move into this position loses: its mover stands at −1.50 or worse (engine).</p>');
  else if (node.is_dubious) html.push('<p class="flag">The move into this position is dubious: its mover stands at −0.50 or worse (engine).</p>');
  if (node.resulting_structure && node.resulting_structure !== 'Unknown') {
    const s = await getJson(`/structure/${encodeURIComponent(node.resulting_structure)}/openings`);
    const st = s?.structure;
    html.push(`<h3>Pawn structure</h3><p id="structure"><b>${esc(node.resulting_structure)}</b> <small>(${esc(node.structure_confidence ?? '')})</small>${st ? ` — ${esc(st.description)}` : ''}</p>`);
    if (st) html.push(`<p><b>White:</b> ${esc(st.white_plans.join('; '))}<br><b>Black:</b> ${esc(st.black_plans.join('; '))}</p>`);
  }
  if (node.transpositions.length > 1) {
    html.push('<h3>Move orders reaching this position</h3><ul id="transpositions">' + node.transpositions.map(t =>
      `<li><a data-moves="${esc(t.moves)}">${esc(t.moves)}</a></li>`).join('') + '</ul>');
  }
  const tree = await getJson(`/opening/${node.node_id}/tree?max_depth=4`);
  const named = tree ? namedBelow(tree.tree, name) : [];
  if (named.length) {
    html.push('<h3>Named variations reached from here</h3><ul id="named">' + named.slice(0, 12).map(([moves, n]) =>
      `<li><a data-moves="${esc(node.moves + ' ' + moves)}">${esc(n)}</a> <small>${esc(moves)}</small></li>`).join('') + '</ul>');
  }
  $('info').innerHTML = html.join('');
}

/** Distinct names below `root` (own names that differ from the current one), most played first. */
function namedBelow(root: TreeNode, current: string): [string, string][] {
  const out: [string, string, number][] = [];
  const seen = new Set([current]);
  const walk = (n: TreeNode, path: string[]) => {
    for (const c of n.children ?? []) {
      const p = [...path, c.san];
      if (c.name && !seen.has(c.name)) {
        seen.add(c.name);
        out.push([p.join(' '), c.name, c.games]);
      }
      walk(c, p);
    }
  };
  walk(root, []);
  return out.sort((a, b) => b[2] - a[2]).map(([m, n]) => [m, n]);
}

async function search(q: string) {
  const box = $('results');
  if (q.trim().length < 2) {
    box.innerHTML = '';
    return;
  }
  const answer = await getJson(`/opening/search?q=${encodeURIComponent(q)}`);
  box.innerHTML = (answer?.results ?? []).slice(0, 10).map((r: any) =>
    `<li><a data-moves="${esc(r.moves)}"><span class="eco">${esc(r.eco_code ?? '')}</span> ${esc(r.name)}</a></li>`).join('');
}

function lineFromUrl(): string[] {
  const moves = new URLSearchParams(location.search).get('moves');
  return moves ? moves.split(/[ +]/).filter(Boolean) : [];
}

function init() {
  board = Chessground($('board'), { movable: { free: false, showDests: true, events: { after: onBoardMove } }, premovable: { enabled: false } });
  document.addEventListener('click', e => {
    const a = (e.target as HTMLElement).closest('[data-san],[data-moves],[data-ply]') as HTMLElement | null;
    if (!a) return;
    if (a.dataset.san) go([...line, a.dataset.san]);
    else if (a.dataset.moves) {
      ($('search') as HTMLInputElement).value = '';
      $('results').innerHTML = '';
      go(tokens(a.dataset.moves));
    } else go(line.slice(0, Number(a.dataset.ply)));
  });
  $('search').addEventListener('input', e => search((e.target as HTMLInputElement).value));
  window.addEventListener('popstate', () => go(lineFromUrl(), false));
  document.addEventListener('keydown', e => {
    if (e.key === 'ArrowLeft' && line.length && document.activeElement?.id !== 'search') go(line.slice(0, -1));
  });
  go(lineFromUrl(), false);
}

init();
