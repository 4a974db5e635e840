#!/usr/bin/env bash
# The held-end and held-point keys (end, end_body, hold) refuse bad values and combinations at
# load with exit code 2 and a message naming the instance, the key(s) and
# the value; good ones run. Usage: test_end_keys.sh CUSP_SIM SRCDIR
set -u
SIM=${1:?usage: test_end_keys.sh CUSP_SIM SRCDIR}
SCENE=${2:?usage: test_end_keys.sh CUSP_SIM SRCDIR}/mjcf/demo_clamped_rod.xml
fail=0
. "$(dirname "$0")/key_checks.sh"
refuse rod.end=bogus -- 'instance "rod"' 'key "end"' bogus 'free pin clamp'
refuse rod.end=1 -- 'key "end"' '"1"'
refuse rod.end_body=nosuch -- 'instance "rod"' 'key "end_body"' 'no body "nosuch"'
refuse "rod.end_body=a b" -- 'key "end_body"' 'one body name'
refuse rod.end=free rod.end_body=handle -- 'key "end_body"' handle 'key "end" is free'
for model in penalty sap ncp native; do
  refuse rod.contact=$model -- 'instance "rod"' 'key "end"' 'key "contact"' "$model"
done
refuse rod.end=pin rod.contact=penalty -- 'key "end"' '"pin"' penalty
# hold: "S pin|clamp [BODY]; ..." (the rod is 0.6 m)
refuse "rod.hold=0.3 weld" -- 'instance "rod"' 'key "hold", entry 1' '"weld" is not one of: pin clamp'
refuse "rod.hold=x pin" -- 'key "hold", entry 1' '"x" is not an arc length'
refuse "rod.hold=0.3 pin; 0.7 clamp" -- 'key "hold", entry 2' 'S = 0.7 m is out of range' '(0, 0.6'
refuse "rod.hold=0 pin" -- 'key "hold", entry 1' 'S = 0 is out of range: must be > 0'
refuse "rod.hold=-0.1 pin" -- 'key "hold", entry 1' 'must be > 0'
refuse "rod.hold=0.3" -- 'key "hold", entry 1' 'expected "S pin|clamp [BODY]"'
refuse "rod.hold=0.3 pin world extra" -- 'key "hold", entry 1' 'expected "S pin|clamp [BODY]"'
refuse "rod.hold=0.3 pin nosuch" -- 'key "hold", entry 1' 'no body "nosuch"'
refuse "rod.hold=$(for i in $(seq 17); do printf '0.%02d pin;' $i; done)" -- 'key "hold", entry 17' 'more than 16 entries'
refuse rod.end=free "rod.hold=0.3 pin" rod.contact=penalty -- 'key "hold"' 'key "contact"' penalty
refuse rod.teleport_speed=0 -- 'instance "rod"' 'key "teleport_speed"' '"0" is out of range' 'must be > 0'
refuse rod.teleport_speed=-5 -- 'key "teleport_speed"' '"-5" is out of range'
refuse rod.teleport_speed=fast -- 'key "teleport_speed"' '"fast" is not a number'
refuse rod.teleport_speed=1e5 -- 'key "teleport_speed"' '"1e5"' 'plausible range 0.01 .. 10000 m/s'
refuse rod.teleport_speed=0.001 -- 'key "teleport_speed"' '"0.001"' 'plausible range'
runs rod.teleport_speed=0.5
refuse rod.pull_speed=0 -- 'instance "rod"' 'key "pull_speed"' '"0" is out of range' 'must be > 0'
refuse rod.pull_speed=1e5 -- 'key "pull_speed"' '"1e5"' 'plausible range 0.001 .. 10000 m/s'
runs rod.pull_speed=0.5
runs "rod.hold=0.3 pin"
runs "rod.hold=0.3 clamp handle; 0.3 pin; 0.6 pin"
runs "rod.hold=none"
runs rod.end=pin
runs rod.end=clamp rod.end_body=handle
runs rod.end=pin rod.end_body=world
runs rod.end=free rod.contact=sap
exit $fail
