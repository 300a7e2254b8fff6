// The explorer page in a real browser (Debian's chromium, driven by playwright-core):
// node tests/browser/explorer.mjs BASE_URL OUTPUT_DIR
// Plays 1. e4 c5 by clicking moves in the table, checks the board and the table against
// /masters and /node/fen, follows a transposition, searches "najdorf", reloads the URL,
// walks back, and measures first paint and a move click; checks the move marks (the
// win-chance loss, as on Lichess) and the legend after 1. e4 c5 2. Nf3. Screenshots go to OUTPUT_DIR.
// Prints one JSON line of measurements; exits non-zero on the first failed check.
import { chromium } from '../../web/node_modules/playwright-core/index.mjs';
import assert from 'node:assert/strict';

const [base, out] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--headless=new'] });
const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
const errors = [];
page.on('pageerror', e => errors.push(String(e)));
const api = async path => (await fetch(base + path)).json();
// Positions compare without move counters (two move orders reach one position).
const epd = fen => fen.split(' ').slice(0, 4).join(' ');
const ready = fen => page.waitForFunction(f => (document.body.dataset.ready ?? '').split(' ').slice(0, 4).join(' ') === f, epd(fen));
const fenOf = async () => epd(await page.evaluate(() => document.body.dataset.ready));
const START = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';

// First paint: navigation start to the first rendered frame with the board.
const t0 = Date.now();
await page.goto(base + '/');
await ready(START);
const loaded = Date.now() - t0;
const paint = await page.evaluate(() => performance.getEntriesByType('paint').find(p => p.name === 'first-contentful-paint')?.startTime ?? -1);
await page.screenshot({ path: `${out}/start.png` });

// The table of the start position equals /masters' moves, most played first.
const masters = await api('/masters');
const rows = await page.$$eval('#moves tbody tr', trs => trs.map(tr => [tr.dataset.san, Number(tr.querySelector('.games').textContent.replace(/,/g, ''))]));
const expected = masters.moves.map(m => [m.san, m.white + m.draws + m.black]).sort((a, b) => b[1] - a[1]);
assert.deepEqual(rows.slice(0, 5), expected.slice(0, 5), 'start table = /masters');

// Click 1. e4, then c5: a click updates board and table.
const clicks = [];
for (const san of ['e4', 'c5']) {
  await page.click(`#moves tr[data-san="${san}"]`);
  const fen = await page.evaluate(() => document.body.dataset.fen);
  await ready(fen);
  // In the page: from the click's navigation to board and table updated.
  clicks.push(Number(await page.evaluate(() => document.body.dataset.renderMs)));
}
const sicilian = 'rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2';
assert.equal(await fenOf(), epd(sicilian), 'board after 1. e4 c5');
assert.match(await page.textContent('#opening'), /Sicilian Defense/);
const node = await api('/node/fen/' + encodeURIComponent(sicilian));
const sicRows = await page.$$eval('#moves tbody tr', trs => trs.map(tr => [tr.dataset.san, Number(tr.querySelector('.games').textContent.replace(/,/g, ''))]));
const sicExpected = node.children.map(c => [c.pgn_move, c.game_count]).sort((a, b) => b[1] - a[1]);
assert.deepEqual(sicRows, sicExpected, 'table after 1. e4 c5 = /node/fen');
const m2 = await api('/masters?play=e2e4,c7c5');
assert.deepEqual(sicRows.slice(0, 3), m2.moves.map(m => [m.san, m.white + m.draws + m.black]).sort((a, b) => b[1] - a[1]).slice(0, 3));
assert.ok(page.url().includes('moves=e4+c5'), page.url());
// The engine section says where the evaluation came from (the store's eval_source).
assert.equal(node.eval_source?.startsWith('okb-evals@'), true, `eval_source: ${node.eval_source}`);
assert.match(await page.textContent('#eval-source'), new RegExp(`depth ${node.stockfish_depth}, okb-evals@`));
await page.screenshot({ path: `${out}/sicilian.png` });

// A transposition: 1. d4 Nf6 2. c4 e6 3. Nc3 d5 reaches the QGD position; follow the other move order.
await page.goto(base + '/?moves=d4+Nf6+c4+e6+Nc3+d5');
const qgd = 'rnbqkb1r/ppp2ppp/4pn2/3p4/2PP4/2N5/PP2PPPP/R1BQKBNR w KQkq - 0 4';
await ready(qgd);
const orders = await page.$$eval('#transpositions a', as => as.map(a => a.dataset.moves));
assert.ok(orders.length >= 2, `transpositions listed: ${orders}`);
const other = orders.find(o => !o.startsWith('1. d4 Nf6'));
await page.click(`#transpositions a[data-moves="${other}"]`);
await ready(qgd);
assert.equal(await fenOf(), epd(qgd), 'the other move order reaches the same position');
assert.ok(decodeURIComponent(page.url()).includes(other.split(' ').filter(t => !/^\d+\.$/.test(t)).join('+')), page.url());

// Search: "najdorf" lands on its position.
await page.fill('#search', 'najdorf');
await page.waitForSelector('#results a');
await page.click('#results a');
const najdorf = 'rnbqkb1r/1p2pppp/p2p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R w KQkq - 0 6';
await ready(najdorf);
assert.match(await page.textContent('#opening'), /Najdorf/);
await page.screenshot({ path: `${out}/najdorf.png` });

// Reload keeps the position; back goes to the previous one.
await page.reload();
await ready(najdorf);
await page.goBack();
await ready(qgd);

// Marks a player reads (issue 44 items 14, 15): after 1. e4 c5 2. Nf3 the main replies lose
// little against the best move, so none is marked, whatever okb's stored absolute flag
// says; every mark follows Lichess's thresholds on the win-chance loss; the legend says
// what ?!, (i), 0 games and an empty eval mean, with the engine's max_ply (4 here).
await page.goto(base + '/?moves=e4+c5+Nf3');
const nf3 = 'rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2';
await ready(nf3);
const replies = (await api('/node/fen/' + encodeURIComponent(nf3))).children;
const markOf = san => page.$eval(`#moves tr[data-san="${san}"] td.san`, td => td.querySelector('.flag')?.textContent ?? '');
const lichessMark = loss => (loss >= 15 ? '??' : loss >= 10 ? '?' : loss >= 5 ? '?!' : '');
for (const c of replies.filter(c => c.win_chance_loss !== null)) {
  assert.equal(await markOf(c.pgn_move), lichessMark(c.win_chance_loss), `mark of 2...${c.pgn_move} (${c.win_chance_loss})`);
}
for (const san of ['d6', 'Nc6', 'e6']) {
  const c = replies.find(r => r.pgn_move === san);
  assert.ok(c && c.win_chance_loss !== null && c.win_chance_loss < 5, `2...${san} loses little: ${JSON.stringify(c)}`);
  assert.equal(await markOf(san), '', `2...${san} is not marked`);
}
const legend = await page.textContent('#legend');
for (const part of ['?!', 'inaccuracy', '5, 10 or 15 points of winning chances', '(i)', 'interpolated', '0 games', 'empty eval', 'up to ply 4']) {
  assert.ok(legend.includes(part), `the legend says ${part}: ${legend}`);
}
// One move deeper the replies reach ply 5, beyond max_ply: empty evals, and the page says why.
await page.goto(base + '/?moves=e4+c5+Nf3+d6');
await ready('rnbqkbnr/pp2pppp/3p4/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3');
assert.deepEqual([...new Set(await page.$$eval('#moves td.eval', tds => tds.map(td => td.textContent)))], [''], 'no eval beyond max_ply');
assert.match(await page.getAttribute('#moves td.eval', 'title'), /ply 5 is beyond the engine's max_ply \(4\)/);
assert.match(await page.textContent('#legend'), /reach ply 5, beyond it/);

assert.deepEqual(errors, [], 'no page errors');
console.log(JSON.stringify({ load_ms: loaded, first_contentful_paint_ms: Math.round(paint), click_render_ms: clicks }));
await browser.close();
