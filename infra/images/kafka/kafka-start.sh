#!/bin/sh
# Starts the single-node KRaft broker formatted at build time. Clients outside the container reach it
# through a published port known only once the container runs, so the address to advertise comes from
# KAFKA_ADVERTISED (host:port) or, when that is unset, from /run/kafka/advertised, written by whoever
# started the container once it knows the port (test/support/containers.ts); this waits for it.
set -eu
if [ -z "${KAFKA_ADVERTISED:-}" ]; then
  echo 'kafka-start: waiting for the address to advertise in /run/kafka/advertised'
  while [ ! -s /run/kafka/advertised ]; do sleep 0.05; done
  KAFKA_ADVERTISED=$(cat /run/kafka/advertised)
fi
config=/tmp/server.properties
cp /opt/kafka/container.properties "$config"
# The last value of a key wins: this replaces the build-time placeholder.
echo "advertised.listeners=PLAINTEXT://$KAFKA_ADVERTISED,BROKER://localhost:9094" >> "$config"
# shellcheck disable=SC2086 # KAFKA_JAVA_OPTS is a list of options
exec java $KAFKA_JAVA_OPTS -Dlog4j.configuration=file:/opt/kafka/log4j.properties -cp '/opt/kafka/lib/*' kafka.Kafka "$config"
