// Bundles the explorer into dist/ (committed, so `cargo build` needs neither node nor the
// network): app.js (esbuild, minified), app.css (chessground's board and pieces + ours),
// index.html. Run `npm ci && npm run build` after changing src/.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

mkdirSync('dist', { recursive: true });
await esbuild.build({
  entryPoints: ['src/main.ts'],
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  legalComments: 'none',
  outfile: 'dist/app.js',
});
const css = ['base', 'brown', 'cburnett'].map(n => readFileSync(`node_modules/chessground/assets/chessground.${n}.css`, 'utf8'));
writeFileSync('dist/app.css', [...css, readFileSync('src/style.css', 'utf8')].join('\n'));
copyFileSync('src/index.html', 'dist/index.html');
