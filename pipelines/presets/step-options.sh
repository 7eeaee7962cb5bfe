# Sourced by the presets: picks, out of the options given for plan, those that say how a step runs, for every step.
#
# plan takes the build options; build-shard and finalize take only these, the options of plan that build-shard and
# finalize take too (src/options.ts; test/e2e/definitions.test.ts holds the two lists below to it). Forms: --flag
# VALUE and --flag=VALUE; a switch as --flag, --flag=BOOL or --no-flag, or its short form alone (-q).
STEP_VALUED=(--workers --memory-budget --progress --log)
STEP_SWITCHES=(--quiet -q)

# step_options ARGS...: sets the array `step_options` to the step options among ARGS, in their order (the last given wins).
step_options() {
  step_options=()
  local -a args=("$@")
  local k a f
  for (( k = 0; k < ${#args[@]}; k++ )); do
    a=${args[k]}
    # After `--` every word is an input.
    [ "$a" = -- ] && break
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
