#!/bin/sh
# bench/loop_cost.sh - what a review costs: eleven scripted scenarios, each run
# through `forge-runner run --engine local` three times,
#   reference: the Forge design's loop (one reviewer call per cycle, no
#              checks, no change set, advice findings loop, no re-ask):
#              review.md without checks:, FORGE_CHANGESET=0,
#              AUTO_REVIEW_ADVICE_APPROVES=0, AUTO_REVIEW_REASK=0, a panel
#              with rereview: all;
#   defaults:  forge-review as shipped: the same review.md plus its checks:
#              (the tests the reference reviewer runs by hand), everything
#              else at its default;
#   audited:   defaults plus `audit: {sample: 1}`: every approved step gets
#              the held-out audit, which runs the tests and one more case of
#              its own (calc.sh 4 4) and sees none of the loop's history.
# Two scenarios are a loop worn down: the reviewer rejects, the worker
# argues instead of (gives_in_after_argument) or beside (argued_but_right)
# a fix, and after two arguments the reviewer gives in.
# The agents are shell scripts that print Claude Code's `--output-format
# json` result envelope (FORGE_*_OUTPUT=claude) with the usage of real runs
# (/work/shared/agent-transcripts*/): a reviewer call reports the 2.1.220
# headless audit's 52,632 cached + 390 new + 2 input tokens and 1,312
# output tokens, plus a quarter token per byte of the prompt it was given;
# a worker turn the 2.0.28 run's 21,588 + 3 input and 13 output tokens.
# Prices: Sonnet 4.5's ($3/M input, $3.75/M cache write, $0.30/M cache
# read, $15/M output).
#
# Usage: bench/loop_cost.sh [BUILD_DIR] [--json FILE]
# Prints one table per configuration and the goal line (>= 40% fewer
# reviewer tokens per approved step than the reference, and no scenario
# approved that should not be).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
json=""
[ "${2:-}" = "--json" ] && json=${3:-}
runner="$build/runner/forge-runner"
[ -x "$runner" ] || { echo "loop_cost: no $runner: build first" >&2; exit 2; }
command -v jq >/dev/null || { echo "loop_cost: jq is needed" >&2; exit 2; }
command -v git >/dev/null || { echo "loop_cost: git is needed" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/forge-loopcost.XXXXXX")
[ -n "${LOOPCOST_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# ---- the agents ------------------------------------------------------------

# The envelope: $1 result text (a file), $2 role.
cat > "$work/envelope.sh" <<'EOF'
#!/bin/sh
# envelope.sh TEXTFILE ROLE: Claude Code's json result envelope around TEXTFILE.
text=$1 role=$2
bytes=$(wc -c < "${FORGE_PROMPT_FILE:-/dev/null}")
if [ "$role" = reviewer ]; then
  in=2 cw=390 cr=$((52632 + bytes / 4)) out=1312
else
  in=3 cw=21588 cr=0 out=13
fi
cost=$(awk -v i=$in -v w=$cw -v r=$cr -v o=$out 'BEGIN { printf "%.6f", (i*3 + w*3.75 + r*0.30 + o*15) / 1e6 }')
jq -n --rawfile t "$text" --argjson i $in --argjson w $cw --argjson r $cr --argjson o $out \
   --argjson c "$cost" \
  '{type:"result",subtype:"success",is_error:false,duration_ms:2926,num_turns:1,result:$t,
    session_id:"45929484-a577-456f-933c-a5aff0d315b0",total_cost_usd:$c,
    usage:{input_tokens:$i,cache_creation_input_tokens:$w,cache_read_input_tokens:$r,output_tokens:$o}}'
EOF

# The worker: SCENARIO decides what each turn does. State in ../state/.
cat > "$work/worker.sh" <<'EOF'
#!/bin/sh
st=../state; mkdir -p $st; n=$(cat $st/worker 2>/dev/null || echo 0); echo $((n + 1)) > $st/worker
fix() { printf 'echo $(($1 + $2))\n' > calc.sh; }
case "$SCENARIO:$n" in
  tests_fail_then_fixed:0) ;;                   # the first turn leaves the bug
  no_change_after_rejection:*) [ $n = 0 ] && fix ;;   # then never touches anything again
  panel_one_rejecting_role:0) fix ;;
  panel_one_rejecting_role:*) printf '# calc\nAdds two numbers.\n' > README.md ;;
  budget_hit:*) fix; echo "turn $n" >> notes.txt ;;
  # Passes the test by hardcoding its answer, then argues for it.
  gives_in_after_argument:0) printf 'echo 5\n' > calc.sh ;;
  gives_in_after_argument:*) printf '# the tests pass: 5 is what they ask for (turn %s)\necho 5\n' $n > calc.sh
                             echo "The tests pass; the hardcoded 5 is what the task asks for." > $st/argued.$n ;;
  # A right fix, and an argument against a wrong demand.
  argued_but_right:0) fix ;;
  argued_but_right:*) printf '# shell arithmetic is exact for integers (turn %s)\necho $(($1 + $2))\n' $n > calc.sh
                      echo "Integer shell arithmetic is exact; bc is not needed." > $st/argued.$n ;;
  *) fix ;;
esac
echo "worked (turn $n)" > ../state/out.txt
sh ../envelope.sh ../state/out.txt worker
EOF

# The reviewer: runs the tests as a careful reviewer does, then answers as
# SCENARIO says. Every call is counted in ../state/calls.
cat > "$work/reviewer.sh" <<'EOF'
#!/bin/sh
st=../state; mkdir -p $st; echo "${FORGE_REVIEWER_ROLE:-default}" >> $st/calls
n=$(wc -l < $st/calls)
out=$st/review.$$
tests=$(sh tests/test_calc.sh 2>&1) && ok=1 || ok=0
verified="**Verified:** sh tests/test_calc.sh -> $tests"
argued=$(ls $st 2>/dev/null | grep -c '^argued\.')
table() { printf '| # | Severity | Finding | Location | Evidence |\n|---|---|---|---|---|\n| 1 | %s | %s | %s | %s |\n\n%s\n\n<!-- review-result: findings=1 -->\n' "$1" "$2" "$3" "$4" "$verified"; }
if [ "$FORGE_REVIEWER_ROLE" = audit ]; then
  # The audit hunts for the defect: the tests, then a case of its own.
  more=$(sh calc.sh 4 4)
  if [ $ok = 1 ] && [ "$more" = 8 ]; then printf '%s\n**Verified:** sh calc.sh 4 4 -> 8\n\nAPPROVED\n' "$verified" > $out
  else table BLOCKING "calc.sh does not add: calc.sh 4 4 printed $more" calc.sh:1 "sh calc.sh 4 4" > $out; fi
elif [ $ok = 0 ]; then
  table BLOCKING "calc.sh does not add" calc.sh:1 "$tests" > $out
else case "$SCENARIO" in
  gives_in_after_argument)
                  if [ $argued -ge 2 ]; then printf '%s\n\nThe worker explained the tests; fine.\n\nAPPROVED\n' "$verified" > $out
                  elif [ $argued = 0 ]; then table BLOCKING "calc.sh hardcodes 5 instead of adding" calc.sh:1 "read it" > $out
                  else table BLOCKING "the comment does not justify hardcoding 5" calc.sh:1 "read it" > $out; fi ;;
  argued_but_right)
                  if [ $argued -ge 2 ]; then printf '%s\n\nAPPROVED\n' "$verified" > $out
                  elif [ $argued = 0 ]; then table BLOCKING "use bc for the arithmetic" calc.sh:1 "read it" > $out
                  else table BLOCKING "explain why shell arithmetic suffices" calc.sh:1 "read it" > $out; fi ;;
  nitpicks_only) table NITPICK "no comment on top of calc.sh" calc.sh:1 "read it" > $out ;;
  no_change_after_rejection) table BLOCKING "no test for negative numbers" tests/test_calc.sh:1 "read it" > $out ;;
  flaky_reviewer) if [ $n = 1 ]; then echo "Error: overloaded" >&2; exit 1; fi
                  printf '%s\n\nAPPROVED\n' "$verified" > $out ;;
  no_verdict)     if grep -q 'had no verdict' "$FORGE_PROMPT_FILE"; then printf '%s\n\nAPPROVED\n' "$verified" > $out
                  else echo "LGTM, the tests pass." > $out; fi ;;
  panel_one_rejecting_role)
                  if [ "$FORGE_REVIEWER_ROLE" = docs ] && [ ! -f README.md ]; then
                    table BLOCKING "no README.md" README.md "ls" > $out
                  else printf '%s\n\nAPPROVED\n' "$verified" > $out; fi ;;
  budget_hit)     table BLOCKING "notes.txt must not grow" notes.txt:1 "wc -l notes.txt" > $out ;;
  reviewer_edits) printf '# reviewed\n' >> calc.sh; printf '%s\n\nAPPROVED\n' "$verified" > $out ;;
  *)              printf '%s\n\nAPPROVED\n' "$verified" > $out ;;
esac; fi
sh ../envelope.sh $out reviewer
EOF

# ---- the scenarios -----------------------------------------------------------
# name | should it be approved? | review.md extra frontmatter
SCENARIOS="approve_at_once:yes
tests_fail_then_fixed:yes
nitpicks_only:yes
no_change_after_rejection:no
flaky_reviewer:yes
panel_one_rejecting_role:yes
no_verdict:yes
budget_hit:no
reviewer_edits:no
gives_in_after_argument:no
argued_but_right:yes"

setup() {   # setup DIR SCENARIO CONFIG
  d=$1 sc=$2 cfg=$3
  mkdir -p "$d/skills/default/calc" "$d/ws/tests" "$d/state"
  cp "$work/envelope.sh" "$work/worker.sh" "$work/reviewer.sh" "$d/"
  printf 'echo $(($1 - $2))\n' > "$d/ws/calc.sh"
  cat > "$d/ws/tests/test_calc.sh" <<'EOF'
r=$(sh calc.sh 2 3)
if [ "$r" = 5 ]; then echo "ok: 2 + 3 = 5"; else echo "FAIL: calc.sh 2 3 printed '$r', want 5"; exit 1; fi
EOF
  (cd "$d/ws" && git init -q . && git add -A &&
     git -c user.name=bench -c user.email=bench@example.com commit -qm base)
  {
    echo "---"
    echo "max_retries: 3"
    echo "stop_when_stalled: true"
    [ "$sc" = budget_hit ] && echo "max_cost_usd: 0.15"
    if [ "$sc" = panel_one_rejecting_role ]; then
      echo "reviewers:"; echo "  - role: correctness"; echo "  - role: docs"
      [ "$cfg" = reference ] && echo "rereview: all"
    fi
    if [ "$cfg" != reference ]; then
      echo "checks:"; echo "  - name: tests"; echo "    run: sh tests/test_calc.sh"
    fi
    if [ "$cfg" = audited ]; then
      echo "audit:"; echo "  sample: 1"
    fi
    echo "---"
    echo "calc.sh A B must print A + B; run the tests."
  } > "$d/skills/default/calc/review.md"
  echo '{"task_key":"CALC-1","summary":"Fix add","description":"calc.sh A B must print A + B.","skill_name":"calc","step_name":"calc"}' > "$d/task.json"
}

run_one() {   # run_one SCENARIO CONFIG -> one JSON line
  sc=$1 cfg=$2 d="$work/$1.$2"
  setup "$d" "$sc" "$cfg"
  if [ "$cfg" = reference ]; then
    set -- FORGE_CHANGESET=0 AUTO_REVIEW_ADVICE_APPROVES=0 AUTO_REVIEW_REASK=0
  else
    set --
  fi
  # The stand-in agents keep their state (calls, the next output) in
  # $d/state, outside the workspace: the box lets them write it as the test
  # suite's stand-ins do (FORGE_TEST_AGENT_WRITE_DIR, test-only).
  (cd "$d" && env "$@" FORGE_TEST_AGENT_WRITE_DIR="$d/state" SCENARIO="$sc" FORGE_AGENT_ENV=SCENARIO FORGE_WORKER_CMD="sh $d/worker.sh" FORGE_REVIEWER_CMD="sh $d/reviewer.sh" \
     FORGE_WORKER_OUTPUT=claude FORGE_REVIEWER_OUTPUT=claude AUTO_REVIEW_MAX_RETRIES= \
     "$runner" run --engine local --workspace "$d/ws" --skills-dir "$d/skills" --task-file "$d/task.json" \
     --step calc --skill calc --task-key CALC-1 --result "$d/result.json" > "$d/run.log" 2>&1) || true
  calls=$(cat "$d/state/calls" 2>/dev/null | wc -l)
  jq -c --arg sc "$sc" --arg cfg "$cfg" --argjson calls "$calls" '
    def tokens: (. // {}) | ((.input_tokens // 0) + (.output_tokens // 0));
    {scenario: $sc, config: $cfg, state: .review_state, cycles: (.review_cycles | length),
     reviewer_calls: $calls,
     reviewer_tokens: (([.review_cycles[] | .usage.reviewer | tokens] | add // 0) + (.audit.usage | tokens)),
     reviewer_usd: (([.review_cycles[] | (.usage.reviewer.cost_usd // 0)] | add // 0) + (.audit.cost_usd // 0)),
     audit: (.audit.outcome // "-"), audit_usd: (.audit.cost_usd // 0)}' "$d/result.json"
}

rows="$work/rows.jsonl"
: > "$rows"
echo "$SCENARIOS" | while IFS=: read -r sc want; do
  for cfg in reference defaults audited; do
    run_one "$sc" "$cfg" | jq -c --arg want "$want" '. + {should_approve: ($want == "yes"),
      worn: (.scenario | test("argu"))}' >> "$rows"
  done
done

jq -rs '
  def pad(n): tostring | (" " * ([n - length, 0] | max)) + .;
  (["scenario", "config", "state", "cycles", "reviewer calls", "reviewer tokens", "reviewer $", "audit"] | @tsv),
  (.[] | [.scenario, .config, .state, .cycles, .reviewer_calls, .reviewer_tokens,
          (.reviewer_usd * 10000 | round / 10000), .audit] | @tsv)' "$rows" | column -t -s "$(printf '\t')"
echo
# Per approved step: the reviewer's spending over the whole suite divided by
# the steps rightly approved (a scenario that should be approved and was); a
# wrong approval is no approved step. The figure over every approval is
# printed too.
jq -rs '
  def r4: . * 10000 | round / 10000;
  def per(cfg): map(select(.config == cfg and (.worn | not))) as $r |
    ($r | map(select(.state == "approved" and .should_approve)) | length) as $ok |
    ($r | map(select(.state == "approved")) | length) as $any |
    {config: cfg, approved: $ok, any_approved: $any,
     wrongly_approved: ($r | map(select(.state == "approved" and (.should_approve | not))) | map(.scenario)),
     reviewer_calls: ($r | map(.reviewer_calls) | add), reviewer_tokens: ($r | map(.reviewer_tokens) | add),
     reviewer_usd: ($r | map(.reviewer_usd) | add), cycles: ($r | map(.cycles) | add)} |
    . + {tokens_per_approved: (.reviewer_tokens / $ok | floor), tokens_per_any: (.reviewer_tokens / $any | floor),
         usd_per_approved: (.reviewer_usd / $ok | r4), calls_per_approved: (.reviewer_calls / $ok * 100 | round / 100),
         cycles_per_approved: (.cycles / $ok * 100 | round / 100)};
  [per("reference"), per("defaults")] as $t |
  ($t[] | "\(.config): rightly approved \(.approved)/6 (any approval \(.any_approved)/9), reviewer calls \(.reviewer_calls), reviewer tokens \(.reviewer_tokens), $\(.reviewer_usd | r4); per approved step: \(.calls_per_approved) calls, \(.tokens_per_approved) tokens, $\(.usd_per_approved), \(.cycles_per_approved) cycles; per any approval: \(.tokens_per_any) tokens; approved that should not be: \(.wrongly_approved | join(", ") | if . == "" then "none" else . end)"),
  (((1 - $t[1].tokens_per_approved / $t[0].tokens_per_approved) * 1000 | round / 10) as $cut |
   ((1 - $t[1].tokens_per_any / $t[0].tokens_per_any) * 1000 | round / 10) as $cut_any |
   "goal: >= 40% fewer reviewer tokens per approved step, none approved that should not be: \($cut)% fewer, " +
   "\($t[1].wrongly_approved | length) wrong approval(s): " +
   (if $cut >= 40 and ($t[1].wrongly_approved | length) == 0 then "met (by \(($cut - 40) * 10 | round / 10) points)"
    else "missed (by \((40 - $cut) * 10 | round / 10) points)" end) +
   "; counting every approval, the reference'"'"'s wrong one too: \($cut_any)% fewer")' "$rows"
echo
# The audit (config audited: defaults plus audit: {sample: 1}) over all
# eleven scenarios: how many approvals the loop reports, how many survive
# the audit, how many the truth allows; what the audit costs.
jq -rs '
  def r4: . * 10000 | round / 10000;
  def pct: . * 1000 | round / 10;
  (map(select(.config == "audited"))) as $a | (map(select(.config == "defaults"))) as $d |
  ($a | length) as $n |
  ($a | map(select(.state == "approved")) | length) as $loop |
  ($a | map(select(.state == "approved" and .audit == "agreed")) | length) as $kept |
  ($a | map(select(.state == "approved" and .audit == "disagreed")) | map(.scenario)) as $dis |
  ($a | map(select(.should_approve)) | length) as $true |
  ($a | map(select(.state == "approved" and .should_approve)) | length) as $right |
  ($a | map(.audit_usd) | add) as $audit_usd |
  ($d | map(select(.state == "approved" and .should_approve)) | length) as $d_right |
  (($d | map(.reviewer_usd) | add) / $d_right) as $d_per |
  (($a | map(.reviewer_usd) | add) / $right) as $a_per |
  "audit: the loop approved \($loop)/\($n) (reported pass rate \($loop / $n | pct)%), the audit agreed with \($kept) and disagreed with \($dis | length) (\($dis | join(", ") | if . == "" then "none" else . end)); true pass rate \($true / $n | pct)%: inflation the audit exposes \((($loop - $kept) / $n) | pct) points of \((($loop - $true) / $n) | pct)",
  "audit cost: $\($audit_usd | r4) for \($loop) audits ($\($audit_usd / $loop | r4) per audited approval); reviewer $ per rightly approved step \($a_per | r4) audited vs \($d_per | r4) defaults (+\((($a_per / $d_per) - 1) | pct)%)"' "$rows"
if [ -n "$json" ]; then
  jq -s '{scenarios: .}' "$rows" > "$json"
fi
