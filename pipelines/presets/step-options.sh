# Sourced by the presets: picks, out of the options given for plan, those that say how a step runs, for every step.
#
# plan takes the build options; build-shard and finalize take only these, the options of plan that build-shard and
# finalize take too (src/options.ts; test/e2e/definitions.test.ts holds the three lists below to it). Forms: --flag
# VALUE and --flag=VALUE; a switch as --flag, --flag=BOOL or --no-flag, or its short form, alone (-q) or in a cluster
# of short options as the CLI reads them (-qh, -qo DIR, -qoDIR: what follows a short option that takes a value is
# that value, so -oq is -o q, not quiet).
STEP_VALUED=(--workers --memory-budget --progress --log)
STEP_SWITCHES=(--quiet -q)
# The short options of plan that take a value.
SHORT_VALUED=(-o)

# step_options ARGS...: sets the array `step_options` to the step options among ARGS, in their order (the last given wins).
step_options() {
  step_options=()
  local -a args=("$@")
  local k a f
  for (( k = 0; k < ${#args[@]}; k++ )); do
    a=${args[k]}
    # After `--` every word is an input.
    [ "$a" = -- ] && break
    # Short options, one or a cluster; `-` is stdin, and -5 a negative number, a value (the CLI takes it as one).
    if [[ $a == -[!-0-9]* ]]; then
      step_short_cluster "${a:1}" && k=$((k + 1))
      continue
    fi
    for f in "${STEP_SWITCHES[@]}"; do
      if [ "$a" = "$f" ] || { [[ $f == --* ]] && { [ "$a" = "--no-${f#--}" ] || [[ $a == "$f="* ]]; }; }; then step_options+=("$a"); fi
    done
    for f in "${STEP_VALUED[@]}"; do
      if [ "$a" = "$f" ] && [ $((k + 1)) -lt ${#args[@]} ]; then
        step_options+=("$a" "${args[k + 1]}")
        k=$((k + 1))
      elif [[ $a == "$f="* ]]; then
        step_options+=("$a")
      fi
    done
  done
}

# step_short_cluster LETTERS: adds to `step_options` the step switches among the short options LETTERS (the word
# less its dash); succeeds when the last of them takes its value from the next word, which is then no option.
step_short_cluster() {
  local letters=$1 c f
  while [ -n "$letters" ]; do
    c=${letters:0:1}
    letters=${letters:1}
    for f in "${STEP_SWITCHES[@]}"; do
      if [ "-$c" = "$f" ]; then step_options+=("$f"); fi
    done
    for f in "${SHORT_VALUED[@]}"; do
      if [ "-$c" = "$f" ]; then [ -z "$letters" ]; return; fi
    done
  done
  return 1
}
