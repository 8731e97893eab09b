# fish completion for nemoc. Installed to share/fish/vendor_completions.d/nemoc.fish.
# tests/toolkit_test.cc fails when a subcommand or option of `nemoc --help` is
# missing here.

set -l commands build validate check diff plan render init explain schema profiles metrics version help
set -l compiling build validate check diff plan render
complete -c nemoc -f

# Subcommands (first word only)
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a build -d 'Compile specs into out/<project>/<target>/'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a validate -d 'Check specs; write nothing'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a check -d 'Fail when out/ differs from what build makes'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a diff -d 'Show what build would change, as a unified diff'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a plan -d 'Show per target what build would produce'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a render -d 'Print the objects of one target as one YAML stream'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a init -d 'Write a commented starter spec that builds as is'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a explain -d 'Document a spec field'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a schema -d 'Print the input JSON Schema (for editors)'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a profiles -d 'List the cloud profiles: built in and under --jpath'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a metrics -d 'Step time, tokens/s, TFLOPS per GPU and MFU'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a version -d 'Print the version of nemoc'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -a help -d 'Show the help of nemoc, or of one subcommand'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -l help -d 'Print help'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -l help-all -d 'Help for every subcommand'
complete -c nemoc -n "not __fish_seen_subcommand_from $commands" -l version -d 'Print the version of nemoc'
complete -c nemoc -n "__fish_seen_subcommand_from help" -a "$commands"

# Options every compiling subcommand takes; spec files as arguments
complete -c nemoc -n "__fish_seen_subcommand_from $compiling" -k -a "(__fish_complete_suffix .yaml .yml)"
complete -c nemoc -n "__fish_seen_subcommand_from $compiling metrics" -l target -x -d 'Only this target (repeatable)'
complete -c nemoc -n "__fish_seen_subcommand_from $compiling metrics" -l set -x -d 'Override a spec value: PATH=VALUE'
complete -c nemoc -n "__fish_seen_subcommand_from $compiling metrics" -l jpath -r -a "(__fish_complete_directories)" -d 'Extra Jsonnet library root'
complete -c nemoc -n "__fish_seen_subcommand_from $compiling" -l kube-schemas -r -a "(__fish_complete_directories)" -d 'Kubernetes/CRD JSON Schema bundle'
complete -c nemoc -n "__fish_seen_subcommand_from $compiling" -s j -l jobs -x -d 'Specs compiled at once'
complete -c nemoc -n "__fish_seen_subcommand_from $compiling" -s q -l quiet -d 'Print errors only'
complete -c nemoc -n "__fish_seen_subcommand_from build validate check plan metrics" -s o -l output -x -a "text json github" -d 'Output format'
complete -c nemoc -n "__fish_seen_subcommand_from diff" -s o -l output -x -a "text json markdown" -d 'Output format'
complete -c nemoc -n "__fish_seen_subcommand_from build validate check plan diff" -l out -r -a "(__fish_complete_directories)" -d 'Output root'

# build
complete -c nemoc -n "__fish_seen_subcommand_from build" -l commit -d 'Commit the written target directories with libgit2'
complete -c nemoc -n "__fish_seen_subcommand_from build" -l repo -r -a "(__fish_complete_directories)" -d 'Repository to commit to'
complete -c nemoc -n "__fish_seen_subcommand_from build" -l branch -x -d 'Branch to commit to'
complete -c nemoc -n "__fish_seen_subcommand_from build" -l author-name -x -d 'Commit author'
complete -c nemoc -n "__fish_seen_subcommand_from build" -l author-email -x -d 'Commit author e-mail'
complete -c nemoc -n "__fish_seen_subcommand_from build" -l no-verify -d 'Commit although the repository has commit hooks'
# check, diff
complete -c nemoc -n "__fish_seen_subcommand_from check" -l expect -r -a "(__fish_complete_directories)" -d 'A tree under --out kept on purpose'
complete -c nemoc -n "__fish_seen_subcommand_from diff" -l stat -d 'Lines added and removed per file'
# init
# The profiles as nemoc finds them: built in and under the line's --jpath.
function __nemoc_profiles
    set -l words (commandline -opc)
    set -l jpaths
    for i in (seq (count $words))
        if test "$words[$i]" = --jpath; and test $i -lt (count $words)
            set -a jpaths --jpath $words[(math $i + 1)]
        end
    end
    nemoc profiles --names $jpaths 2>/dev/null
end
complete -c nemoc -n "__fish_seen_subcommand_from init" -l profile -x -a "(__nemoc_profiles)" -d 'Cloud profile'
complete -c nemoc -n "__fish_seen_subcommand_from init" -l model -x -d 'Model preset'
complete -c nemoc -n "__fish_seen_subcommand_from init" -l cluster-queue -x -d "The cluster's Kueue ClusterQueue, for a starter that admits through it"
complete -c nemoc -n "__fish_seen_subcommand_from init profiles" -l jpath -r -a "(__fish_complete_directories)" -d 'Extra Jsonnet library root (profiles of your own)'
# profiles
complete -c nemoc -n "__fish_seen_subcommand_from profiles" -l names -d 'Print the names only'
complete -c nemoc -n "__fish_seen_subcommand_from profiles" -s o -l output -x -a "text json" -d 'Output format'
complete -c nemoc -n "__fish_seen_subcommand_from init" -l stdout -d 'Print the spec instead of writing NAME.yaml'
# explain, schema
complete -c nemoc -n "__fish_seen_subcommand_from explain" -s r -l recursive -d 'Every field below PATH as a tree'
complete -c nemoc -n "__fish_seen_subcommand_from explain schema" -l jpath -r -a "(__fish_complete_directories)" -d 'Extra Jsonnet library root (its profiles, runtimes, stages)'
# metrics
complete -c nemoc -n "__fish_seen_subcommand_from metrics" -k -a "(__fish_complete_suffix .json)"
complete -c nemoc -n "__fish_seen_subcommand_from metrics" -l spec -r -a "(__fish_complete_suffix .yaml .yml)" -d 'The spec the run was built from'
complete -c nemoc -n "__fish_seen_subcommand_from metrics" -l steps -x -d 'Inclusive step window FIRST:LAST'
complete -c nemoc -n "__fish_seen_subcommand_from metrics" -l stage -x -a "train pretrain" -d 'The training stage the log is from'
complete -c nemoc -n "__fish_seen_subcommand_from metrics" -l pin -d 'Record the measured MFU as the prior of the spec'
