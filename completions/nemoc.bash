# bash completion for nemoc                                -*- shell-script -*-
# Installed to share/bash-completion/completions/nemoc. tests/toolkit_test.cc
# fails when a subcommand or option of `nemoc --help` is missing here.

_nemoc() {
  local cur prev words cword
  _init_completion || return

  local commands="build validate check diff plan render init explain schema metrics version help"
  if ((cword == 1)); then
    COMPREPLY=($(compgen -W "$commands --help --help-all --version" -- "$cur"))
    return
  fi
  local command=${words[1]}

  case $prev in
    --profile)
      COMPREPLY=($(compgen -W "vanilla-k8s eks-efa gke-a4" -- "$cur"))
      return ;;
    -o | --output)
      if [[ $command == diff ]]; then
        COMPREPLY=($(compgen -W "text json markdown" -- "$cur"))
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
    validate) opts="$compile" ;;
    render) opts="--target --set --jpath --kube-schemas -j --jobs -q --quiet --help" ;;
    init) opts="--profile --model --cluster-queue --stdout --help" ;;
    explain) opts="-r --recursive --help" ;;
    metrics) opts="--spec --target --steps --stage --set --jpath -o --output --help" ;;
    schema | version) opts="--help" ;;
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
