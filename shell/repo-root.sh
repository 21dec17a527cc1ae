# Shared by the bash and zsh hooks (the same text is valid in both).
  # The root of the repository git would find from here (the first directory upwards with a
  # `.git`, or that is a bare repository): when it is not the one the prompt was last judged for
  # (a line, or a job still running, made one here), the binary judges it again.
  __shellgate_repo_root() {
    local d=$PWD
    __shellgate_root=''
    while :; do
      if [[ -e $d/.git || -L $d/.git || ( -f $d/HEAD && -d $d/objects && -d $d/refs ) ]]; then
        __shellgate_root=$d
        return 0
      fi
      [[ $d == / || -z $d ]] && return 0
      d=${d%/*}
      [[ -n $d ]] || d=/
    done
  }
