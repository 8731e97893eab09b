# bash completion for nemoc                                -*- shell-script -*-
# Installed to share/bash-completion/completions/nemoc. tests/toolkit_test.cc
# fails when a subcommand or option of `nemoc --help` is missing here.

_nemoc() {
  local cur prev words cword
  _init_completion || return

  local commands="build validate check diff plan render init explain schema profiles metrics version help"
  if ((cword == 1)); then
    COMPREPLY=($(compgen -W "$commands --help --help-all --version" -- "$cur"))
    return
  fi
  local command=${words[1]}

  case $prev in
    --profile)
      # The profiles as nemoc finds them: built in and under the line's --jpath.
      local i jpaths=()
      for ((i = 2; i < cword; i++)); do
        [[ ${words[i]} == --jpath && $((i + 1)) -lt $cword ]] && jpaths+=(--jpath "${words[i + 1]}")
      done
      COMPREPLY=($(compgen -W "$(nemoc profiles --names "${jpaths[@]}" 2>/dev/null)" -- "$cur"))
      return ;;
    -o | --output)
      if [[ $command == diff ]]; then
        COMPREPLY=($(compgen -W "text json markdown" -- "$cur"))
      elif [[ $command == profiles ]]; then
        COMPREPLY=($(compgen -W "text json" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "text json github" -- "$cur"))
      fi
      return ;;
    --out | --jpath | --kube-schemas | --repo | --expect)
      _filedir -d
      return ;;
    --spec)
      _filedir '@(yaml|yml)'
      return ;;
    -j | --jobs | --model | --cluster-queue | --target | --set | --steps | --branch | --author-name | --author-email)
      return ;;
  esac

  local compile="--target --set --jpath --kube-schemas -j --jobs -q --quiet -o --output --help"
  local opts
  case $command in
    build) opts="$compile --out --commit --repo --branch --author-name --author-email --no-verify" ;;
    check) opts="$compile --out --expect" ;;
    plan) opts="$compile --out" ;;
    diff) opts="--target --set --jpath --kube-schemas -j --jobs -q --quiet --help --out --stat -o --output" ;;
    validate) opts="$compile --out" ;;
    render) opts="--target --set --jpath --kube-schemas -j --jobs -q --quiet --help" ;;
    init) opts="--profile --model --cluster-queue --jpath --stdout --help" ;;
    profiles) opts="--jpath --names -o --output --help" ;;
    explain) opts="-r --recursive --jpath --help" ;;
    metrics) opts="--spec --target --steps --stage --pin --set --jpath -o --output --help" ;;
    schema) opts="--jpath --help" ;;
    version) opts="--help" ;;
    help)
      ((cword == 2)) && COMPREPLY=($(compgen -W "$commands" -- "$cur"))
      return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return
  fi
  case $command in
    build | validate | check | diff | plan | render) _filedir '@(yaml|yml)' ;;
    metrics) _filedir json ;;
  esac
} && complete -F _nemoc nemoc
