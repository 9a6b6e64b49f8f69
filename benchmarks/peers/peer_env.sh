# Sourced by setup.sh / compare.sh: works around pysplishsplash's bundled
# libGLdispatch segfaulting on import next to Debian's glvnd, by preloading the
# system libGLdispatch.so.0. Exports SPLISH_LD_PRELOAD (empty if not found).
SPLISH_LD_PRELOAD="$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null) | awk '/libGLdispatch\.so\.0 /{print $NF; exit}')"
if [ -n "$SPLISH_LD_PRELOAD" ]; then
    case ":${LD_PRELOAD:-}:" in
        *":$SPLISH_LD_PRELOAD:"*) ;;
        *) export LD_PRELOAD="$SPLISH_LD_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}" ;;
    esac
fi
export SPLISH_LD_PRELOAD
