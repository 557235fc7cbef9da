#!/usr/bin/env bash
# One command for every benchmark: `make bench` (or bench/run.sh BUILD_DIR). Each writes its own
# section of docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
out=docs/performance.md
today=$(date -u +%Y-%m-%d)

python3 bench/http_bench.py --binary "$build_dir/switchboard" --out "$out"
python3 bench/bot_bench.py --binary "$build_dir/switchboard" --out "$out"
# The same two on PostgreSQL (a throw-away cluster each), and the backends and several instances
# side by side (issue 19).
python3 bench/http_bench.py --binary "$build_dir/switchboard" --out "$out" --backend postgresql
python3 bench/bot_bench.py --binary "$build_dir/switchboard" --out "$out" --backend postgresql
python3 bench/backend_bench.py --binary "$build_dir/switchboard" --out "$out"
python3 bench/instances_bench.py --binary "$build_dir/switchboard" --out "$out"
python3 bench/onebot_bench.py --binary "$build_dir/switchboard" --out "$out"
python3 bench/login_flood_bench.py --binary "$build_dir/switchboard" --out "$out"
# The web console's budget (issue 15): bundle size, dashboard time, 1,000-bot list; a missed target
# is recorded in its section, not a reason to stop the other benchmarks.
node web/scripts/budget.mjs --binary "$build_dir/switchboard" --out "$out" || echo "console budget: a target was missed (see $out)"

{
  echo "### Model calls (issue 3) — $today"
  echo
  echo "Command: \`make bench\` (\`$build_dir/bench/sb_llm_bench\`): the gateway with the real"
  echo "HTTP client and OpenAI wire protocol against an in-process loopback fake (its own thread),"
  echo "one client I/O thread."
  echo
  "$build_dir/bench/sb_llm_bench"
} | python3 bench/write_section.py "$out" llm-bench

{
  echo "### Plugin events (issues 5 and 13) — $today"
  echo
  echo "Command: \`make bench\` (\`$build_dir/bench/sb_plugin_bench examples/plugins/greeter\`): the"
  echo "example plugin (Python 3.11, standard library) as a real child process over pipes, called"
  echo "with message_received events through PluginProcess; one I/O thread. Once as a plain"
  echo "process, once in its sandbox (issue 13: bubblewrap namespaces, seccomp, a cgroup): the"
  echo "sandbox costs its start (bwrap, the cgroup, the seccomp program), not its messages."
  echo
  "$build_dir/bench/sb_plugin_bench examples/plugins/greeter"
} | python3 bench/write_section.py "$out" plugin-bench

{
  echo "### Knowledge index (issue 17) — $today"
  echo
  echo "Command: \`make bench\` (\`$build_dir/bench/sb_knowledge_bench\`): the knowledge-base"
  echo "vector index (hnswlib HNSW graph over our own vector store) in-process, one thread; synthetic"
  echo "embeddings in gaussian clusters; recall against the index's own brute-force search."
  echo
  "$build_dir/bench/sb_knowledge_bench"
} | python3 bench/write_section.py "$out" knowledge-bench

{
  echo "### Knowledge ingestion and retrieval (issue 17) — $today"
  echo
  echo "Command: \`make bench\` (\`$build_dir/bench/sb_knowledge_ingest_bench 8\`): KnowledgeService"
  echo "on a real SQLite file (FTS5), the real parser, chunker and vector index, and an embedder"
  echo "that answers at once (word-hash vectors), so the figures are Switchboard's own cost."
  echo
  "$build_dir/bench/sb_knowledge_ingest_bench" 8
} | python3 bench/write_section.py "$out" knowledge-ingest-bench
python3 bench/monitoring_cost_bench.py --binary "$build_dir/switchboard" --out "$out"
{
  echo "### Monitoring queries over one million records (issue 18) — $today"
  echo
  echo "Command: \`make bench\` (\`$build_dir/bench/sb_monitoring_bench 1000000\`): a real SQLite"
  echo "file filled through SqlMonitoringRepository (migration 9) with 1,000,000 records over"
  echo "30 days (20 bots, 5 pipelines: 60 % messages, 30 % model calls, 5 % embedding calls, 5 %"
  echo "errors), then the repository calls of GET /monitoring/data (overview, five pages of 50"
  echo "with their totals), in-process, one thread."
  echo
  "$build_dir/bench/sb_monitoring_bench" 1000000
} | python3 bench/write_section.py "$out" monitoring-query-bench
echo "wrote $out"
