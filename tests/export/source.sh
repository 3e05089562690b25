#!/usr/bin/env bash
# Which tpuci an exported workflow builds (docs/github.md, "Which tpuci
# the workflow runs"): the build records its checkout's remote and commit
# (cmake/build_info.cmake), `tpuci export github` names them and never a
# placeholder, refuses with one line when there is none, and --package
# installs a .deb instead; `cpack -G DEB` makes that .deb.
#
# tpuci is built here from a copy of the tree under test made into a git
# repository with a made-up origin (a clone that has a remote), and built
# again as that checkout changes: each rebuild only recompiles the
# recorded file. The recording's address rules run in cmake's script
# mode, and the build under test ($TPUCI) must agree with its own record.
. "$TESTS/e2e/lib.sh"
src=$(cd "$TESTS/.." && pwd)
command -v git > /dev/null || { echo "SKIP: no git"; exit 77; }
command -v cmake > /dev/null || { echo "SKIP: no cmake"; exit 77; }
origin=https://git.example.com/acme/tpuci.git
export GIT_AUTHOR_NAME=tpuci GIT_AUTHOR_EMAIL=tpuci@example.com
export GIT_COMMITTER_NAME=tpuci GIT_COMMITTER_EMAIL=tpuci@example.com
cat > spec.lua <<'LUA'
job "unit" { run = "true" }
LUA

# The tree under test, as it is now (what a commit of it would hold).
mkdir clone
if git -C "$src" rev-parse --show-toplevel > /dev/null 2>&1; then
  (cd "$src" && git ls-files -z --cached --others --exclude-standard |
     xargs -0 -r tar -c --no-recursion --ignore-failed-read 2> /dev/null) | tar -x -C clone
else
  (cd "$src" && tar -c --exclude='./build*' --exclude=./.git .) | tar -x -C clone
fi
[ -f clone/CMakeLists.txt ] && pass || { fail "the tree was not copied"; finish; }
git -C clone init -q -b main && git -C clone add -A && git -C clone commit -qm tree &&
  git -C clone remote add origin "$origin" && pass || { fail "git init of the copy"; finish; }
sha=$(git -C clone rev-parse HEAD)

# rebuild: builds the copy's tpuci (and its libraries: the package's).
rebuild() {
  if ! cmake --build clone/build -j 2 > build.log 2>&1; then
    fail "building the copy"; tail -n 30 build.log >&2; finish
  fi
}
cmake -S clone -B clone/build -DCMAKE_BUILD_TYPE=Debug -DTPUCI_BUILD_TESTS=OFF > configure.log 2>&1 ||
  { fail "configuring the copy"; tail -n 30 configure.log >&2; finish; }
rebuild
tp=$PWD/clone/build/tpuci

# wf_env STEP KEY: a value of the workflow's steps (the first step named
# STEP, in the tpuci job), from wf.yml, without YAML's quotes (a commit
# that starts with digits is quoted: YAML 1.1 could read a number).
wf_env() {
  awk -v step="- name: $1" -v key="$2:" '
    index($0, step) { on = 1; next }
    on && /^    - name:/ { exit }
    on && $1 == key { sub(/^ *[A-Z_]+: /, ""); gsub(/^"|"$/, ""); print; exit }' wf.yml
}

# 1. A clone with a remote: the workflow builds that remote at the
#    build's commit, and --version says so. The commit is on no branch of
#    origin yet: a warning (the workflow could not fetch it).
out=$("$tp" --version)
expect_out "built from $origin at commit $sha" "--version of the copy"
"$tp" export github spec.lua > wf.yml 2> err; code=$?
out=$(cat err)
expect_code 0 "export from a clone with a remote"
for step in "Find tpuci's commit" "Build and install tpuci"; do
  [ "$(wf_env "$step" TPUCI_SOURCE)" = "$origin" ] && pass ||
    fail "$step: TPUCI_SOURCE is '$(wf_env "$step" TPUCI_SOURCE)', want $origin"
  [ "$(wf_env "$step" TPUCI_REF)" = "$sha" ] && pass ||
    fail "$step: TPUCI_REF is '$(wf_env "$step" TPUCI_REF)', want $sha"
done
expect_out "tpuci: warning: commit ${sha:0:12}, which this tpuci was built from, is not on a branch of $origin"
grep -q "tpuci/tpuci\|TPUCI_REF: main" wf.yml && fail "a placeholder in the workflow" || pass

# 2. Pushed (origin's branch has it): no warning. Changed: a warning.
git -C clone update-ref refs/remotes/origin/main HEAD
rebuild
"$tp" export github spec.lua > wf.yml 2> err
[ -s err ] && fail "warnings for a pushed commit: $(cat err)" || pass
echo "# changed" >> clone/README.md
rebuild
"$tp" export github spec.lua > wf.yml 2> err
out=$(cat err)
expect_out "tpuci: warning: this tpuci was built with changes that commit ${sha:0:12} lacks"
out=$("$tp" --version)
expect_out "at commit $sha, with changes" "--version of a changed checkout"
# --ref: that revision, and no warning about the build's commit.
"$tp" export github --ref v0.1.0 spec.lua > wf.yml 2> err
[ "$(wf_env "Find tpuci's commit" TPUCI_REF)" = v0.1.0 ] && pass || fail "--ref v0.1.0"
[ -s err ] && fail "warnings with --ref: $(cat err)" || pass
git -C clone checkout -q README.md

# 3. No remote: refused, exit 2, one line that says to pass --source.
git -C clone remote remove origin
rebuild
run_tpuci_at() { out=$("$tp" "$@" 2>&1); code=$?; }
run_tpuci_at export github spec.lua
expect_code 2 "export without a remote"
[ "$out" = "tpuci: this tpuci was not built from a git checkout with a remote, so the workflow has no tpuci to build: pass --source URL (its git repository) and --ref REF, or --package URL of a .deb" ] &&
  pass || fail "the refusal is not the one line: $out"
# --source alone: the build's commit.
"$tp" export github --source https://mirror.example.com/tpuci.git spec.lua > wf.yml 2> err &&
  [ "$(wf_env "Build and install tpuci" TPUCI_SOURCE)" = https://mirror.example.com/tpuci.git ] &&
  [ "$(wf_env "Build and install tpuci" TPUCI_REF)" = "$sha" ] && pass ||
  fail "--source without a remote: $(cat err)"
# A local path as origin is no remote a runner can fetch.
git -C clone remote add origin "$src"
rebuild
run_tpuci_at export github spec.lua
expect_code 2 "export with a local origin"
expect_out "pass --source URL"

# 4. --package: the .deb is installed instead of building tpuci.
"$tp" export github --package https://example.com/tpuci_0.1.0_amd64.deb spec.lua > wf.yml 2> err; code=$?
out=$(cat err)
expect_code 0 "export --package"
[ "$(wf_env "Install tpuci from its package" TPUCI_PACKAGE)" = https://example.com/tpuci_0.1.0_amd64.deb ] &&
  pass || fail "--package: no install step with TPUCI_PACKAGE"
grep -q 'sudo apt-get install -y --no-install-recommends "$RUNNER_TEMP/tpuci.deb"' wf.yml && pass ||
  fail "--package: the install step does not install the .deb"
grep -q "TPUCI_SOURCE\|Build and install tpuci" wf.yml && fail "--package still builds tpuci" || pass
run_tpuci_at export github --package https://example.com/t.deb --source "$origin" spec.lua
expect_code 2 "--package with --source"

# 5. The package: cpack -G DEB in the build folder.
if command -v dpkg-deb > /dev/null && command -v dpkg-shlibdeps > /dev/null; then
  if (cd clone/build && cpack -G DEB > ../../cpack.log 2>&1); then pass
  else fail "cpack -G DEB"; tail -n 30 cpack.log >&2; fi
  # The version is the project's (CMakeLists.txt), in the name and the binary.
  version=$(sed -n 's/^project(tpuci VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
  deb=$(ls clone/build/tpuci_"$version"_*.deb 2> /dev/null | head -n 1)
  if [ -n "$deb" ]; then
    dpkg -c "$deb" > contents
    for f in ./usr/bin/tpuci ./usr/include/tpuci.h ./usr/lib/libtpuci.a ./usr/lib/libtpuci.so \
             ./usr/lib/pkgconfig/tpuci.pc ./usr/share/man/man1/tpuci.1; do
      grep -qE " $f( |$)" contents && pass || fail "the .deb has no $f"
    done
    depends=$(dpkg-deb -f "$deb" Depends)
    for lib in liblua5.4 libuv1 libyaml libcurl libjansson libssl zlib1g libinih1; do
      case $depends in *"$lib"*) pass ;; *) fail "Depends lacks $lib: $depends" ;; esac
    done
    # What it holds runs: its tpuci, unpacked.
    dpkg-deb -x "$deb" root
    out=$(root/usr/bin/tpuci --version 2>&1)
    expect_out "tpuci $version" "the packaged tpuci"
  else
    fail "cpack made no tpuci_${version}_*.deb"
  fi
else
  echo "note: no dpkg-deb or dpkg-shlibdeps (dpkg-dev): the package is not built"
fi

# 6. The recording's rules, in script mode: what a runner can fetch, and
#    nothing else; never a user or password.
record() { # record DIR: prints the recorded url and commit of DIR.
  rm -f rec.c
  cmake -DSRC="$1" -DOUT="$PWD/rec.c" -P "$src/cmake/build_info.cmake" ||
    { echo "script failed"; return; }
  sed -n 's/^const char tpuci__build_source_\(url\|commit\)\[\] = "\(.*\)";$/\1=\2/p' rec.c |
    paste -sd ' '
}
git init -q -b main rec && git -C rec commit -q --allow-empty -m x
rsha=$(git -C rec rev-parse HEAD)
check_url() { # check_url ORIGIN WANT
  git -C rec remote remove origin 2> /dev/null
  git -C rec remote add origin "$1"
  got=$(record "$PWD/rec")
  [ "$got" = "url=$2 commit=$rsha" ] && pass || fail "origin $1: recorded '$got', want url=$2"
}
check_url https://github.com/acme/tpuci.git https://github.com/acme/tpuci.git
check_url https://me:s3cret@github.com/acme/tpuci.git https://github.com/acme/tpuci.git
check_url http://token@git.example.com:8080/x/tpuci http://git.example.com:8080/x/tpuci
check_url git@github.com:acme/tpuci.git https://github.com/acme/tpuci.git
check_url ssh://git@gitlab.example.com:2222/acme/tpuci.git https://gitlab.example.com/acme/tpuci.git
check_url git://git.example.com/tpuci.git git://git.example.com/tpuci.git
check_url /srv/git/tpuci.git ""
check_url ../tpuci ""
check_url file:///srv/git/tpuci.git ""
check_url 'https://github.com/acme/tp"uci.git' ""
check_url 'https://github.com/acme/tp uci.git' ""
# No origin: the commit alone. Not a checkout, even one inside another
# repository (a tarball unpacked into a project's tree): nothing.
git -C rec remote remove origin
[ "$(record "$PWD/rec")" = "url= commit=$rsha" ] && pass || fail "no origin: $(record "$PWD/rec")"
mkdir rec/tarball
[ "$(record "$PWD/rec/tarball")" = "url= commit=" ] && pass ||
  fail "a folder inside a checkout: $(record "$PWD/rec/tarball")"
# Stable: a second run leaves the file alone.
cmake -DSRC="$PWD/rec/tarball" -DOUT="$PWD/stable.c" -P "$src/cmake/build_info.cmake"
touch -d '2001-01-01' stable.c
cmake -DSRC="$PWD/rec/tarball" -DOUT="$PWD/stable.c" -P "$src/cmake/build_info.cmake"
[ "$(stat -c %Y stable.c)" = "$(date -d 2001-01-01 +%s)" ] && pass || fail "an unchanged record was rewritten"

# 7. The build under test agrees with its own record: it names what its
#    --version says, or refuses without a remote.
ver=$("$TPUCI" --version)
"$TPUCI" export github spec.lua > wf.yml 2> err; code=$?
case $ver in
  *"built from http"*" at commit "*)
    url=${ver#*built from }; url=${url%% at commit*}
    commit=${ver#* at commit }; commit=${commit%%,*}
    [ "$code" = 0 ] && [ "$(wf_env "Find tpuci's commit" TPUCI_SOURCE)" = "$url" ] &&
      [ "$(wf_env "Find tpuci's commit" TPUCI_REF)" = "$commit" ] && pass ||
      fail "the build under test ($ver) exports $(wf_env "Find tpuci's commit" TPUCI_SOURCE)" ;;
  *)
    out=$(cat err)
    expect_code 2 "the build under test, without a remote ($ver)"
    expect_out "pass --source URL" ;;
esac
finish
