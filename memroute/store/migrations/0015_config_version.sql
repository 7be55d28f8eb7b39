-- One number that moves on in every transaction that writes the settings or the
-- providers, whichever process (or tool) writes them: a process keeps its copy of both
-- tables while the number stays the same (memroute/store/config_version.py).
CREATE TABLE config_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO config_version (id, version) VALUES (1, 1);

CREATE TRIGGER settings_inserted AFTER INSERT ON settings BEGIN
    UPDATE config_version SET version = version + 1;
END;
CREATE TRIGGER settings_updated AFTER UPDATE ON settings BEGIN
    UPDATE config_version SET version = version + 1;
END;
CREATE TRIGGER settings_deleted AFTER DELETE ON settings BEGIN
    UPDATE config_version SET version = version + 1;
END;
CREATE TRIGGER providers_inserted AFTER INSERT ON providers BEGIN
    UPDATE config_version SET version = version + 1;
END;
CREATE TRIGGER providers_updated AFTER UPDATE ON providers BEGIN
    UPDATE config_version SET version = version + 1;
END;
CREATE TRIGGER providers_deleted AFTER DELETE ON providers BEGIN
    UPDATE config_version SET version = version + 1;
END;
