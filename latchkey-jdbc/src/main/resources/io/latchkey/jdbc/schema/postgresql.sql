-- latchkey-jdbc, table mode: the schema for PostgreSQL (10 or later).
-- Hand this file to Flyway or Liquibase as it is, or let latchkey create it (createSchema=true).
-- Another table prefix: replace every "latchkey_" below by it, and give latchkey the same prefix.
-- res_key and holder_key are SHA-256 digests (hex) of the resource kind and name, and of the holder
-- id: names of any alphabet are keys of one fixed width, compared byte for byte.
-- Times (expires_at, deadline, woken_at) are milliseconds since the epoch by the database's clock.
-- wake_seq, wake_slots and wake_owner carry the last wake-up of a resource to the clients that poll
-- for wake-ups (MariaDB, H2; PostgreSQL uses NOTIFY and leaves them alone).

CREATE TABLE IF NOT EXISTS latchkey_resources (
  res_key     CHAR(64)      NOT NULL PRIMARY KEY,
  kind        VARCHAR(16)   NOT NULL,
  name        VARCHAR(255)  NOT NULL,
  fence       BIGINT        NOT NULL,
  amount      BIGINT,
  queue_seq   BIGINT        NOT NULL,
  woken_owner VARCHAR(1024),
  woken_at    BIGINT,
  wake_seq    BIGINT        NOT NULL DEFAULT 0,
  wake_slots  INTEGER       NOT NULL DEFAULT 0,
  wake_owner  VARCHAR(1024),
  has_rows    BOOLEAN       NOT NULL DEFAULT TRUE,
  sole_holder_key CHAR(64),
  sole_holder_id  VARCHAR(1024),
  sole_client_id  VARCHAR(255),
  sole_mode       CHAR(1),
  sole_expires_at BIGINT,
  sole_token      BIGINT
);

-- PostgreSQL only, for the lock's one-statement first hold and last release. has_rows is FALSE only
-- when the last operation that loaded the lock's rows left none (every operation that adds one sets
-- it TRUE; rows made before the column existed start TRUE). A lock's sole holder: a first hold
-- taken while the lock had no holder and no waiter is kept in the sole_ columns of the lock's
-- resource row instead of a holder row, so that taking it and giving it back each update one row.
-- Any other operation on the lock moves it into latchkey_holders first. The sole_ columns are NULL
-- otherwise. Tables made by an earlier latchkey gain the columns here.
ALTER TABLE latchkey_resources ADD COLUMN IF NOT EXISTS has_rows BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE latchkey_resources ADD COLUMN IF NOT EXISTS sole_holder_key CHAR(64);
ALTER TABLE latchkey_resources ADD COLUMN IF NOT EXISTS sole_holder_id VARCHAR(1024);
ALTER TABLE latchkey_resources ADD COLUMN IF NOT EXISTS sole_client_id VARCHAR(255);
ALTER TABLE latchkey_resources ADD COLUMN IF NOT EXISTS sole_mode CHAR(1);
ALTER TABLE latchkey_resources ADD COLUMN IF NOT EXISTS sole_expires_at BIGINT;
ALTER TABLE latchkey_resources ADD COLUMN IF NOT EXISTS sole_token BIGINT;

CREATE TABLE IF NOT EXISTS latchkey_holders (
  res_key         CHAR(64)      NOT NULL,
  holder_key      CHAR(64)      NOT NULL,
  holder_id       VARCHAR(1024) NOT NULL,
  client_id       VARCHAR(255)  NOT NULL,
  shared_holds    INTEGER       NOT NULL,
  exclusive_holds INTEGER       NOT NULL,
  expires_at      BIGINT        NOT NULL,
  token           BIGINT        NOT NULL,
  PRIMARY KEY (res_key, holder_key)
);

CREATE TABLE IF NOT EXISTS latchkey_queue (
  res_key    CHAR(64)      NOT NULL,
  holder_key CHAR(64)      NOT NULL,
  owner      VARCHAR(1024) NOT NULL,
  mode       CHAR(1)       NOT NULL,
  deadline   BIGINT        NOT NULL,
  arrival    BIGINT        NOT NULL,
  PRIMARY KEY (res_key, holder_key)
);

CREATE TABLE IF NOT EXISTS latchkey_clients (
  client_id  VARCHAR(255) NOT NULL PRIMARY KEY,
  host       VARCHAR(255) NOT NULL,
  pid        BIGINT       NOT NULL,
  started_at BIGINT       NOT NULL,
  expires_at BIGINT       NOT NULL
);

-- The epoch record of a quorum member (latchkey-quorum, docs/adr/0009-quorum-fencing.md): one row
-- (id 1) without expiry, so it lives exactly as long as the data. quarantine_until is the end of
-- the quarantine given when the record was created, in milliseconds by the database's clock (0:
-- none). A database restored without its data has no row.
CREATE TABLE IF NOT EXISTS latchkey_epoch (
  id               INTEGER NOT NULL PRIMARY KEY,
  epoch_value      BIGINT  NOT NULL,
  quarantine_until BIGINT  NOT NULL
);

-- Advisory mode only: which lock (res_key) claimed each 64-bit advisory key first, so that two
-- names whose keys collide are never silently one lock (the second is refused).
CREATE TABLE IF NOT EXISTS latchkey_advisory_keys (
  lock_key BIGINT       NOT NULL PRIMARY KEY,
  res_key  CHAR(64)     NOT NULL,
  name     VARCHAR(255) NOT NULL
);

-- Row mode only: one row per hold, locked (SELECT ... FOR UPDATE by primary key) by a transaction
-- that stays open on a connection of its own for as long as the hold lasts. A holder whose rows
-- nobody locks has ended. session_id is that connection's pg_backend_pid(), for an operator's evict.
CREATE TABLE IF NOT EXISTS latchkey_row_locks (
  res_key    CHAR(64)     NOT NULL,
  hold_id    CHAR(32)     NOT NULL,
  token      BIGINT       NOT NULL,
  client_id  VARCHAR(255) NOT NULL,
  session_id BIGINT       NOT NULL,
  PRIMARY KEY (res_key, hold_id)
);
