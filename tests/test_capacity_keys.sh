#!/usr/bin/env bash
# The key contact_capacity refuses bad values at load with exit code 2 and a message naming the
# instance, the key, the value and the range (at most 8 per disk of the arm); good ones run.
# Usage: test_capacity_keys.sh CUSP_SIM SRCDIR
set -u
SIM=${1:?usage: test_capacity_keys.sh CUSP_SIM SRCDIR}
SCENE=${2:?usage: test_capacity_keys.sh CUSP_SIM SRCDIR}/mjcf/default.xml
fail=0
. "$(dirname "$0")/key_checks.sh"
# default.xml's arm: 3 sections of 6 disks and a plate, and the base disk: 22 disks, at most 176
refuse arm.contact_capacity=-1 -- 'instance "arm"' 'key "contact_capacity"' '"-1" is out of range' '0..8192'
refuse arm.contact_capacity=abc -- 'key "contact_capacity"' '"abc" is not an integer'
refuse arm.contact_capacity=1.5 -- 'key "contact_capacity"' '"1.5" is not an integer'
refuse "arm.contact_capacity=4 4" -- 'key "contact_capacity"' 'not an integer'
refuse arm.contact_capacity=177 -- 'instance "arm"' 'key "contact_capacity"' '177 is above 176' '8 per disk' '22'
refuse arm.contact_capacity=9000 -- 'key "contact_capacity"' 'out of range'
refuse arm.disks=2 arm.contact_capacity=100 -- 'key "contact_capacity"' '100 is above 80' '10'
runs arm.contact_capacity=0
runs arm.contact_capacity=176
runs arm.contact_capacity=12
exit $fail
