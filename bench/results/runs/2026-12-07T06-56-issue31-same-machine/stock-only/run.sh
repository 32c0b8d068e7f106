#!/bin/bash
. /work/main/scripts/use-node-24.sh >/dev/null 2>&1
for i in 1 2 3 4; do
  for side in base31 main; do
    if [ $side = base31 ]; then dir=/srv/base31; else dir=/work/main; fi
    cd $dir
    echo "== $side round $i $(date -u +%H:%M:%S)" >> /tmp/ab2/progress
    node --import tsx bench/run.ts --db postgres --only stock-by-30-skus > /tmp/ab2/$side-$i.log 2>&1
    echo "   rc $? $(date -u +%H:%M:%S)" >> /tmp/ab2/progress
  done
done
echo ALLDONE >> /tmp/ab2/progress
