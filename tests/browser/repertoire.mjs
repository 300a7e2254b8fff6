// The explorer page marking a repertoire and an opponent, in a real browser (Debian's
// chromium, driven by playwright-core):
// node tests/browser/repertoire.mjs BASE_URL OUTPUT_DIR REPERTOIRE PLAYER
// Opens /?rep=REPERTOIRE&player=PLAYER (the opponent has the repertoire's other colour)
// and checks, at positions along the repertoire and its most likely gap, that the table
// marks exactly the repertoire's moves (★), its gaps and the opponent's game counts as
// GET /repertoire/{name} and GET /player answer them, and that the report panel shows
// the coverage and the gaps, whose links lead to their lines. Prints one JSON line;
// exits non-zero on the first failed check.
import { chromium } from '../../web/node_modules/playwright-core/index.mjs';
import assert from 'node:assert/strict';

const [base, out, rep, player] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--headless=new'] });
const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
const errors = [];
page.on('pageerror', e => errors.push(String(e)));
const epd = fen => fen.split(' ').slice(0, 4).join(' ');
const ready = fen => page.waitForFunction(f => (document.body.dataset.ready ?? '').split(' ').slice(0, 4).join(' ') === f, epd(fen));
const report = await (await fetch(`${base}/repertoire/${encodeURIComponent(rep)}`)).json();
const color = report.color === 'white' ? 'black' : 'white';
const query = `rep=${encodeURIComponent(rep)}&player=${encodeURIComponent(player)}`;

/** The table's rows: uci → {rep, gap, opp}. */
const rows = () => page.$$eval('#moves tbody tr', trs => Object.fromEntries(trs.map(tr => [tr.dataset.uci, {
  rep: tr.classList.contains('rep'), gap: tr.classList.contains('gap'), opp: Number(tr.querySelector('.opp')?.textContent.replace(/,/g, '') || 0),
}])));

/** Checks the marks at the position after `moves` (SAN, reached by URL) against the API. */
async function check(moves, fen) {
  await page.goto(`${base}/?${query}${moves.length ? '&moves=' + moves.join('+') : ''}`);
  await ready(fen);
  const got = await rows();
  const mine = new Set(report.book.find(b => b.epd === epd(fen))?.moves ?? []);
  const gaps = new Set(report.gaps.filter(g => g.epd === epd(fen)).map(g => g.uci));
  const q = new URLSearchParams({ player, color, fen, recentGames: '0' });
  const theirs = Object.fromEntries((await (await fetch(`${base}/player?${q}`)).json()).moves.map(m => [m.uci, m.white + m.draws + m.black]));
  for (const uci of new Set([...mine, ...Object.keys(theirs)])) assert.ok(uci in got, `${moves.join(' ')}: ${uci} is listed`);
  for (const [uci, r] of Object.entries(got)) {
    assert.equal(r.rep, mine.has(uci), `${moves.join(' ')}: ${uci} marked as a repertoire move`);
    assert.equal(r.gap, gaps.has(uci), `${moves.join(' ')}: ${uci} marked as a gap`);
    assert.equal(r.opp, theirs[uci] ?? 0, `${moves.join(' ')}: ${uci}'s opponent games`);
  }
  return { moves: moves.join(' '), marked: Object.values(got).filter(r => r.rep).length, gaps: gaps.size, opponent: Object.keys(theirs).length };
}

const seen = [];
seen.push(await check([], 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'));
seen.push(await check(['e4'], 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'));
seen.push(await check(['d4', 'Nf6', 'c4', 'g6'], 'rnbqkb1r/pppppp1p/5np1/8/2PP4/8/PP2PPPP/RNBQKBNR w KQkq - 0 3'));
assert.ok(seen[1].marked >= 1, 'a prepared answer to 1. e4 is marked');
assert.ok(seen.some(s => s.gaps > 0), 'a gap is marked on the way');
assert.ok(seen.every(s => s.opponent > 0), "the opponent's moves are shown");
await page.screenshot({ path: `${out}/repertoire.png` });

// The report panel: coverage as the report's figures, the gaps most likely first.
const coverage = await page.$$eval('#coverage tbody tr', trs => trs.map(tr => [Number(tr.cells[0].textContent), tr.cells[1].textContent]));
assert.deepEqual(coverage, report.coverage.map(c => [c.ply, (c.inside * 100).toFixed(1) + '%']), 'coverage panel');
const gapLinks = await page.$$eval('#gaps a', as => as.map(a => a.textContent));
assert.deepEqual(gapLinks, report.gaps.slice(0, 10).map(g => g.line), 'gap list');
// The most likely gap's link plays its line.
await page.click('#gaps a');
await page.waitForFunction(n => (document.body.dataset.ready ?? '') !== '' && document.querySelectorAll('#crumbs a').length === n + 1, report.gaps[0].line.split(' ').filter(t => !/^\d+\.+$/.test(t)).length);
assert.ok(decodeURIComponent(page.url()).includes(`rep=${rep}`), `the marks stay on: ${page.url()}`);
assert.deepEqual(errors, [], 'no page errors');
console.log(JSON.stringify({ positions: seen }));
await browser.close();
