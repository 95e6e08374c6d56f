-- hrsync orders reporting, SQLite dialect. Same conventions as 00001_init.sql:
-- times are UTC text declared TIMESTAMP, calendar days "YYYY-MM-DD" declared
-- DATE, months "YYYY-MM" text, money REAL, JSON documents TEXT, flags 0/1.
-- Keep this file and ../postgres/00002_orders.sql in step: the views have the
-- same names and columns on both, so analysts' SQL runs on either
-- (docs/reporting.md).

-- +goose Up

-- orders_watermarks: per tenant, the last calendar day the orders job listed.
CREATE TABLE orders_watermarks (
    tenant     TEXT PRIMARY KEY,          -- tenant (company)
    last_day   DATE NOT NULL,             -- last UTC day listed by a successful run
    updated_at TIMESTAMP NOT NULL         -- when it was written
);

-- orders: one row per order of a synced person, as listed and polled.
CREATE TABLE orders (
    tenant             TEXT NOT NULL,     -- tenant (company)
    order_id           TEXT NOT NULL,     -- the platform's order id
    collection_id      TEXT NOT NULL,     -- collection the order was placed in
    order_number       TEXT NOT NULL DEFAULT '', -- the platform's order number
    external_id        TEXT,              -- person who ordered (people.external_id); NULL when unknown
    placed_at          TIMESTAMP NOT NULL, -- when the order was placed (createdAt)
    placed_day         DATE NOT NULL,     -- UTC calendar day of placed_at
    placed_month       TEXT NOT NULL,     -- UTC month of placed_at, "YYYY-MM"
    status             TEXT,              -- last status polled: Placed, Pending, Partially Shipped, Shipped; NULL before the first poll
    status_observed_at TIMESTAMP,         -- when the current status was first observed
    shipped_at         TIMESTAMP,         -- when status Shipped was first observed; NULL before
    is_final           BOOLEAN NOT NULL DEFAULT 0 -- 1 when Shipped with no line item open: polling is done
                       CHECK (is_final IN (0, 1)),
    polling_stopped    BOOLEAN NOT NULL DEFAULT 0 -- 1 when the order grew older than orders.stopPollingAfter before it was final
                       CHECK (polling_stopped IN (0, 1)),
    polling_stopped_at TIMESTAMP,         -- when polling was stopped; NULL while polled
    first_seen_at      TIMESTAMP NOT NULL, -- when hrsync first listed the order
    updated_at         TIMESTAMP NOT NULL, -- last time a column of the row changed
    -- No declared foreign key to people, as on PostgreSQL: the store checks
    -- each batch's people in one query, and hrsync never deletes a person.
    PRIMARY KEY (tenant, order_id)
);
-- The same indexes as on PostgreSQL (docs/reporting.md, "Keys and indexes").
CREATE INDEX orders_person ON orders (tenant, external_id, placed_at);
CREATE INDEX orders_open ON orders (tenant, placed_at) WHERE NOT is_final AND NOT polling_stopped;

-- order_line_items: the lines of each order, as listed, with their last polled status.
CREATE TABLE order_line_items (
    tenant             TEXT NOT NULL,     -- tenant (company)
    order_id           TEXT NOT NULL,     -- order the line belongs to
    line_item_id       TEXT NOT NULL,     -- the platform's line item id
    product_id         TEXT NOT NULL DEFAULT '', -- product ordered (products.product_id)
    variant_id         TEXT NOT NULL DEFAULT '', -- variant ordered
    title              TEXT NOT NULL DEFAULT '', -- line title
    product_title      TEXT NOT NULL DEFAULT '', -- product title at order time
    variant_title      TEXT NOT NULL DEFAULT '', -- variant title at order time
    quantity           REAL NOT NULL DEFAULT 0,  -- units ordered
    price              REAL NOT NULL DEFAULT 0,  -- unit price charged
    retail_price       REAL NOT NULL DEFAULT 0,  -- unit retail price
    image_url          TEXT NOT NULL DEFAULT '', -- line image URL; '' when none
    image_aspect_ratio REAL,              -- line image aspect ratio; NULL when none
    personalizations   TEXT,              -- personalization fields as returned (JSON); NULL when none
    sha                TEXT NOT NULL DEFAULT '', -- personalization sha; '' when none
    status             TEXT,              -- last polled line status (e.g. processing, shipped, canceled); NULL before the first poll
    tracking_url       TEXT NOT NULL DEFAULT '', -- current tracking link; '' when none
    tracking_number    TEXT NOT NULL DEFAULT '', -- current tracking number; '' when none
    status_observed_at TIMESTAMP,         -- when the current status was first observed
    first_seen_at      TIMESTAMP NOT NULL, -- when hrsync first listed the line
    updated_at         TIMESTAMP NOT NULL, -- last time a column of the row changed
    -- No foreign key to orders, as on PostgreSQL: the store writes a line
    -- only with its order, in one transaction, and never deletes an order.
    PRIMARY KEY (tenant, order_id, line_item_id)
);
CREATE INDEX order_line_items_status ON order_line_items (tenant, status) WHERE status IS NOT NULL;

-- shipments: every parcel of a line item (allShipments), by tracking number.
CREATE TABLE shipments (
    tenant          TEXT NOT NULL,        -- tenant (company)
    order_id        TEXT NOT NULL,        -- order
    line_item_id    TEXT NOT NULL,        -- line item shipped
    tracking_number TEXT NOT NULL,        -- carrier tracking number; '' when the platform gave none
    tracking_url    TEXT NOT NULL DEFAULT '', -- tracking link
    first_seen_at   TIMESTAMP NOT NULL,   -- when hrsync first saw the parcel
    PRIMARY KEY (tenant, order_id, line_item_id, tracking_number),
    FOREIGN KEY (tenant, order_id, line_item_id) REFERENCES order_line_items (tenant, order_id, line_item_id) ON DELETE CASCADE
);

-- order_status_history: each change of an order's status, when observed.
CREATE TABLE order_status_history (
    tenant          TEXT NOT NULL,        -- tenant (company)
    order_id        TEXT NOT NULL,        -- order
    observed_at     TIMESTAMP NOT NULL,   -- when hrsync observed the new status
    status          TEXT NOT NULL,        -- the new status
    previous_status TEXT,                 -- the status before; NULL for the first observation
    PRIMARY KEY (tenant, order_id, observed_at),
    FOREIGN KEY (tenant, order_id) REFERENCES orders (tenant, order_id) ON DELETE CASCADE
);
CREATE INDEX order_status_history_status ON order_status_history (tenant, status, observed_at);

-- line_item_status_history: each change of a line item's status, when observed.
CREATE TABLE line_item_status_history (
    tenant          TEXT NOT NULL,        -- tenant (company)
    order_id        TEXT NOT NULL,        -- order
    line_item_id    TEXT NOT NULL,        -- line item
    observed_at     TIMESTAMP NOT NULL,   -- when hrsync observed the new status
    status          TEXT NOT NULL,        -- the new status
    previous_status TEXT,                 -- the status before; NULL for the first observation
    PRIMARY KEY (tenant, order_id, line_item_id, observed_at),
    FOREIGN KEY (tenant, order_id, line_item_id) REFERENCES order_line_items (tenant, order_id, line_item_id) ON DELETE CASCADE
);
CREATE INDEX line_item_status_history_status ON line_item_status_history (tenant, status, observed_at);

-- products: each product seen in an order, as last read (GET product).
CREATE TABLE products (
    tenant           TEXT NOT NULL,       -- tenant (company)
    product_id       TEXT NOT NULL,       -- the platform's product id
    collection_id    TEXT NOT NULL,       -- collection it was read from
    title            TEXT NOT NULL,       -- title in the configured language
    brand            TEXT,                -- brand; NULL when none
    model            TEXT,                -- model; NULL when none
    status           TEXT NOT NULL,       -- Active or Draft
    creation_status  TEXT NOT NULL,       -- Pending, Done or Error
    is_in_stock      BOOLEAN NOT NULL CHECK (is_in_stock IN (0, 1)),     -- in stock when read
    is_discontinued  BOOLEAN NOT NULL CHECK (is_discontinued IN (0, 1)), -- discontinued when read
    min_price        REAL,                -- lowest variant price in country_code
    max_price        REAL,                -- highest variant price in country_code
    country_code     TEXT NOT NULL DEFAULT '', -- country the prices were asked in; '' for none
    language         TEXT NOT NULL DEFAULT '', -- accept-language the texts were asked in
    raw              TEXT NOT NULL,       -- the whole product document as returned (JSON)
    checked_at       TIMESTAMP NOT NULL,  -- last time hrsync read it
    updated_at       TIMESTAMP NOT NULL,  -- last time its content changed
    PRIMARY KEY (tenant, product_id)
);
CREATE INDEX products_checked ON products (tenant, checked_at);

-- product_tags: the tags of each product, one row per tag.
CREATE TABLE product_tags (
    tenant     TEXT NOT NULL,             -- tenant (company)
    product_id TEXT NOT NULL,             -- product
    tag        TEXT NOT NULL,             -- tag name
    PRIMARY KEY (tenant, product_id, tag),
    FOREIGN KEY (tenant, product_id) REFERENCES products (tenant, product_id) ON DELETE CASCADE
);
CREATE INDEX product_tags_tag ON product_tags (tenant, tag);

-- analyst_people: the people analysts group by, without names or e-mail.
CREATE VIEW analyst_people AS
SELECT tenant, external_id, department, location, start_date,
       CASE WHEN departed_at IS NULL THEN 1 ELSE 0 END AS active
FROM people;

-- analyst_grants: balances granted to people, without names or e-mail.
CREATE VIEW analyst_grants AS
SELECT tenant, external_id, reason, occurrence, amount, state, created_at
FROM grants;

-- order_facts: orders with derived durations in days (the date arithmetic
-- differs between dialects; the view hides it).
CREATE VIEW order_facts AS
SELECT tenant, order_id, collection_id, order_number, external_id, placed_at, placed_day, placed_month,
       status, is_final, polling_stopped, shipped_at,
       CASE WHEN shipped_at IS NULL THEN NULL
            ELSE julianday(shipped_at) - julianday(placed_at) END AS days_to_ship,
       julianday('now') - julianday(placed_at) AS age_days
FROM orders;

-- line_item_facts: line items with their order's person and dates, and the amount spent.
CREATE VIEW line_item_facts AS
SELECT li.tenant, li.order_id, li.line_item_id, o.external_id, o.placed_at, o.placed_day, o.placed_month,
       o.shipped_at, li.product_id, li.variant_id, li.product_title, li.variant_title, li.quantity, li.price,
       CASE WHEN li.status = 'canceled' THEN 0 ELSE li.quantity * li.price END AS spent,
       li.status, li.tracking_number
FROM order_line_items li
JOIN orders o ON o.tenant = li.tenant AND o.order_id = li.order_id;

-- +goose Down
DROP VIEW line_item_facts;
DROP VIEW order_facts;
DROP VIEW analyst_grants;
DROP VIEW analyst_people;
DROP TABLE product_tags;
DROP TABLE products;
DROP TABLE line_item_status_history;
DROP TABLE order_status_history;
DROP TABLE shipments;
DROP TABLE order_line_items;
DROP TABLE orders;
DROP TABLE orders_watermarks;
