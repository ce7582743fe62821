#!/usr/bin/env node
// node-random: a Euchre bot in Node.js that plays a uniformly random legal action.
//
// It is the example for bot authors who do not use Python: everything it knows about
// the referee comes from the .proto files in proto/euchre/v1, loaded at run time. A bot
// in any other language does the same four things:
//
//   1. dial the referee and open ONE RefereeService.Connect stream (one stream = one seat);
//   2. send a Hello (protocol version, name, version, the seat token);
//   3. answer every decision_request with a decision_reply carrying the same
//      request_id and one of the legal_actions, copied as received;
//   4. stop when the referee ends the stream or says shutdown, except when the shutdown
//      says `restarting` (a standing ladder): then reconnect, as after a lost connection.
//
// Configuration (the referee sets the environment variables when it starts the bot):
//   EUCHRE_REFEREE_ADDRESS  or --address HOST:PORT   where to dial (required);
//                                                    unix:PATH dials a Unix socket
//   EUCHRE_BOT_TOKEN        or --token TOKEN         the seat token for Hello.token
//   EUCHRE_BOT_NAME         or --name NAME           the name in Hello.bot_name
//   EUCHRE_TLS_CA           or --tls-ca FILE         dial with TLS, trusting this CA
//                                                    certificate (PEM); unset: plaintext
//   EUCHRE_GIVE_UP_AFTER    or --give-up-after S     keep reconnecting for S seconds (30)
//   EUCHRE_BOT_SEED                                  a seed, for reproducible play
//
// Exit status: 0 when the referee ends the stream, 2 when it refuses the handshake
// (except SHUTTING_DOWN, which is retried), 1 when it cannot be reached for about 30
// seconds, 130 / 143 on SIGINT / SIGTERM (the stream is closed first).
'use strict';

const fs = require('fs');
const path = require('path');
const { parseArgs } = require('util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOCOL_VERSION = 1;
const BOT_VERSION = '1.0.0';
const DEFAULT_GIVE_UP_S = 30; // how long to keep retrying an unreachable referee

// ---------------------------------------------------------------------------- protocol
// Load the service definition straight from the .proto files. The options fix how
// messages look in JavaScript, and this file relies on them:
//   keepCase: true   field names as in the .proto (request_id, legal_actions, ...)
//   enums: String    enum values as their names ('ACTION_KIND_PLAY', 'SUIT_HEARTS', ...)
//   longs: String    uint64 fields (request_id) as decimal strings, so nothing is rounded
//   oneofs: true     msg.payload names the field of the oneof that is set
// Unset fields are left out of decoded objects, so an Action copied from legal_actions
// encodes back to exactly the message the referee sent.
const PROTO_ROOT = path.join(__dirname, '..', '..', 'proto');
const packageDefinition = protoLoader.loadSync(
  path.join(PROTO_ROOT, 'euchre', 'v1', 'referee.proto'),
  { keepCase: true, enums: String, longs: String, oneofs: true, includeDirs: [PROTO_ROOT] },
);
const euchre = grpc.loadPackageDefinition(packageDefinition).euchre.v1;

// gRPC status codes with which the referee refuses a handshake (it also sends a
// Refusal message first); retrying would not help.
const REFUSED = new Set([
  grpc.status.UNAUTHENTICATED, grpc.status.FAILED_PRECONDITION,
  grpc.status.ALREADY_EXISTS, grpc.status.INVALID_ARGUMENT,
]);

// ---------------------------------------------------------------------------- randomness
// mulberry32: a tiny seedable PRNG, so that EUCHRE_BOT_SEED gives the same choices from
// the same decisions. Without a seed, Math.random is used.
function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------- the bot
// The decision itself: any legal action, uniformly at random. A real bot would look at
// request.observation (its hand, the trump, the tricks so far, the scores...) and
// request.kind; the observation is complete, so no memory of earlier events is needed.
function choose(request, random) {
  const legal = request.legal_actions;
  return legal[Math.floor(random() * legal.length)];
}

class Refused extends Error {
  constructor(reason, detail) {
    super(`${reason}: ${detail}`);
    this.reason = reason;
  }
}

// The referee stops and will start again (Shutdown.restarting): reconnect.
class Restarting extends Error {}

// The open stream and client, so that a signal can close them before the bot exits.
let current = null;

// One connection: handshake, then play until the stream ends. Resolves with a reason
// when the referee ends the stream; rejects with Refused on a refusal, with Restarting
// when the referee stops to start again, or with the gRPC error if the connection fails
// (the caller retries the last two). `onWelcome` is called once the
// handshake is accepted.
function playSession(options, random, onWelcome) {
  const client = new euchre.RefereeService(options.address, options.credentials);
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (fn, value) => {
      if (!settled) {
        settled = true;
        current = null;
        client.close();
        fn(value);
      }
    };
    const call = client.Connect();
    current = { call, client };

    call.on('data', (msg) => {
      switch (msg.payload) {
        case 'welcome':
          onWelcome();
          break;
        case 'refusal': // the referee closes the stream right after this
          finish(reject, new Refused(msg.refusal.reason, msg.refusal.detail));
          break;
        case 'decision_request': {
          const request = msg.decision_request;
          call.write({
            decision_reply: { request_id: request.request_id, action: choose(request, random) },
          });
          break;
        }
        case 'fault': // our reply was not accepted (should never happen to this bot)
          process.stderr.write(`fault: ${msg.fault.kind}: ${msg.fault.detail}\n`);
          break;
        case 'shutdown':
          call.end();
          if (msg.shutdown.restarting) {
            finish(reject, new Restarting(`the referee is restarting: ${msg.shutdown.reason}`));
          } else {
            finish(resolve, `shutdown: ${msg.shutdown.reason}`);
          }
          break;
        default:
          // game_start, hand_start, game_event, game_over: this bot needs none of them.
          break;
      }
    });
    call.on('error', (err) => finish(reject, err));
    call.on('status', (status) => {
      if (status.code === grpc.status.OK) finish(resolve, 'the referee closed the stream');
    });

    // The handshake: the first message on the stream, and only the first.
    call.write({
      hello: {
        protocol_version: PROTOCOL_VERSION,
        bot_name: options.name,
        bot_version: BOT_VERSION,
        token: options.token,
        capabilities: { forms: [], decks: [] }, // empty = every form and every deck
      },
    });
  });
}

// Connect, and reconnect with backoff while the referee is unreachable, restarting, or
// refusing because it is shutting down. A welcomed session starts a fresh budget.
async function run(options, random) {
  let delay = 100;
  let waited = 0;
  for (;;) {
    try {
      await playSession(options, random, () => { delay = 100; waited = 0; });
      return 0;
    } catch (err) {
      if (err instanceof Refused && err.reason !== 'REFUSAL_REASON_SHUTTING_DOWN') {
        process.stderr.write(`${options.name}: refused: ${err.message}\n`);
        return 2;
      }
      if (err instanceof Restarting) {
        process.stderr.write(`${options.name}: ${err.message}; reconnecting\n`);
      } else if (REFUSED.has(err.code)) {
        process.stderr.write(`${options.name}: refused: ${err.details}\n`);
        return 2;
      }
      if (waited >= options.giveUpMs) {
        process.stderr.write(`${options.name}: connection failed: ${err.message}\n`);
        return 1;
      }
      await new Promise((r) => setTimeout(r, delay));
      waited += delay;
      delay = Math.min(delay * 2, 2000);
    }
  }
}

function main() {
  const env = process.env;
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        address: { type: 'string', default: env.EUCHRE_REFEREE_ADDRESS || '' },
        token: { type: 'string', default: env.EUCHRE_BOT_TOKEN || '' },
        name: { type: 'string', default: env.EUCHRE_BOT_NAME || 'node-random' },
        'tls-ca': { type: 'string', default: env.EUCHRE_TLS_CA || '' },
        'give-up-after': { type: 'string', default: env.EUCHRE_GIVE_UP_AFTER || '' },
      },
    }));
  } catch (err) {
    process.stderr.write(`${err.message}\nusage: random_bot.js [--address HOST:PORT|unix:PATH] [--token TOKEN] [--name NAME] [--tls-ca FILE] [--give-up-after SECONDS]\n`);
    process.exit(2);
  }
  if (!values.address) {
    process.stderr.write('no referee address: pass --address or set EUCHRE_REFEREE_ADDRESS\n');
    process.exit(2);
  }
  const giveUp = values['give-up-after'] ? Number(values['give-up-after']) : DEFAULT_GIVE_UP_S;
  if (!(giveUp > 0)) {
    process.stderr.write('--give-up-after (or EUCHRE_GIVE_UP_AFTER) takes a number of seconds above 0\n');
    process.exit(2);
  }
  values.giveUpMs = giveUp * 1000;
  // TLS when given the CA certificate that signed the referee's certificate.
  if (values['tls-ca']) {
    let ca;
    try {
      ca = fs.readFileSync(values['tls-ca']);
    } catch (err) {
      process.stderr.write(`cannot read the CA file (--tls-ca or EUCHRE_TLS_CA): ${err.message}\n`);
      process.exit(2);
    }
    values.credentials = grpc.credentials.createSsl(ca);
  } else {
    values.credentials = grpc.credentials.createInsecure();
  }
  const seed = env.EUCHRE_BOT_SEED;
  const random = seed ? mulberry32(Number.parseInt(seed, 10)) : Math.random;
  // Ctrl-C or SIGTERM: close the stream and exit quietly with 128 + the signal's number.
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.on(signal, () => {
      if (current !== null) {
        current.call.cancel();
        current.client.close();
      }
      process.exit(code);
    });
  }
  run(values, random).then((code) => process.exit(code));
}

main();
