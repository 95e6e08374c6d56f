-- hrsync orders reporting, PostgreSQL dialect. Every table and view lives in
-- the schema the store was opened with (the connection's search_path); each
-- is described with COMMENT ON so analysts see it in their SQL tools. Keep
-- this file and ../sqlite/00002_orders.sql in step: the views have the same
-- names and columns on both (docs/reporting.md).

-- +goose Up

CREATE TABLE orders_watermarks (
    tenant     text PRIMARY KEY,
    last_day   date NOT NULL,
    updated_at timestamptz NOT NULL
);
COMMENT ON TABLE orders_watermarks IS 'Per tenant, the last calendar day the orders job listed; the next run starts overlapDays before it.';
COMMENT ON COLUMN orders_watermarks.tenant IS 'Tenant (company).';
COMMENT ON COLUMN orders_watermarks.last_day IS 'Last UTC day listed by a successful run.';
COMMENT ON COLUMN orders_watermarks.updated_at IS 'When the watermark was written.';

CREATE TABLE orders (
    tenant             text NOT NULL,
    order_id           text NOT NULL,
    collection_id      text NOT NULL,
    order_number       text NOT NULL DEFAULT '',
    external_id        text,
    placed_at          timestamptz NOT NULL,
    placed_day         date NOT NULL,
    placed_month       text NOT NULL,
    status             text,
    status_observed_at timestamptz,
    shipped_at         timestamptz,
    is_final           boolean NOT NULL DEFAULT false,
    polling_stopped    boolean NOT NULL DEFAULT false,
    polling_stopped_at timestamptz,
    first_seen_at      timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    -- No declared foreign key to people: its per-row check cost more than
    -- an index. The store checks the batch's people set-wise instead (one
    -- query that also locks them FOR KEY SHARE, as the foreign key would),
    -- and hrsync never deletes a person (docs/reporting.md, "Keys and indexes").
    PRIMARY KEY (tenant, order_id)
);
-- Secondary indexes are paid for on every row the orders job writes, so
-- each one has a documented question or a query of the job behind it
-- (docs/reporting.md, "Keys and indexes"): orders_person serves a person's
-- orders (spend against the balance granted, people who never ordered);
-- orders_open is partial and serves the job's list of orders still polled.
CREATE INDEX orders_person ON orders (tenant, external_id, placed_at);
CREATE INDEX orders_open ON orders (tenant, placed_at) WHERE NOT is_final AND NOT polling_stopped;
COMMENT ON TABLE orders IS 'One row per order of a person synced by hrsync, as listed (orders/get) and polled (order status).';
COMMENT ON COLUMN orders.tenant IS 'Tenant (company).';
COMMENT ON COLUMN orders.order_id IS 'The platform''s order id.';
COMMENT ON COLUMN orders.collection_id IS 'Collection the order was placed in.';
COMMENT ON COLUMN orders.order_number IS 'The platform''s order number.';
COMMENT ON COLUMN orders.external_id IS 'Person who ordered (analyst_people.external_id); NULL when the platform named no synced person.';
COMMENT ON COLUMN orders.placed_at IS 'When the order was placed (createdAt).';
COMMENT ON COLUMN orders.placed_day IS 'UTC calendar day of placed_at.';
COMMENT ON COLUMN orders.placed_month IS 'UTC month of placed_at, YYYY-MM.';
COMMENT ON COLUMN orders.status IS 'Last status polled: Placed, Pending, Partially Shipped or Shipped; NULL before the first poll.';
COMMENT ON COLUMN orders.status_observed_at IS 'When the current status was first observed.';
COMMENT ON COLUMN orders.shipped_at IS 'When status Shipped was first observed; NULL before.';
COMMENT ON COLUMN orders.is_final IS 'True when the order is Shipped with no line item open: it is no longer polled.';
COMMENT ON COLUMN orders.polling_stopped IS 'True when the order grew older than orders.stopPollingAfter before it was final; its status is no longer polled.';
COMMENT ON COLUMN orders.polling_stopped_at IS 'When polling was stopped; NULL while polled.';
COMMENT ON COLUMN orders.first_seen_at IS 'When hrsync first listed the order.';
COMMENT ON COLUMN orders.updated_at IS 'Last time a column of the row changed.';

CREATE TABLE order_line_items (
    tenant             text NOT NULL,
    order_id           text NOT NULL,
    line_item_id       text NOT NULL,
    product_id         text NOT NULL DEFAULT '',
    variant_id         text NOT NULL DEFAULT '',
    title              text NOT NULL DEFAULT '',
    product_title      text NOT NULL DEFAULT '',
    variant_title      text NOT NULL DEFAULT '',
    quantity           numeric NOT NULL DEFAULT 0,
    price              numeric NOT NULL DEFAULT 0,
    retail_price       numeric NOT NULL DEFAULT 0,
    image_url          text NOT NULL DEFAULT '',
    image_aspect_ratio double precision,
    personalizations   jsonb,
    sha                text NOT NULL DEFAULT '',
    status             text,
    tracking_url       text NOT NULL DEFAULT '',
    tracking_number    text NOT NULL DEFAULT '',
    status_observed_at timestamptz,
    first_seen_at      timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    -- No foreign key to orders: a per-row check costs more than the COPY
    -- of the row itself, and the store writes a line only in the
    -- transaction that writes (or finds) its order, from the same listed
    -- order; orders are never deleted (docs/reporting.md, "Keys and indexes").
    PRIMARY KEY (tenant, order_id, line_item_id)
);
-- Partial: a listed line has no status until its first poll, so ingest
-- does not pay for it; it serves the questions by line status (canceled).
CREATE INDEX order_line_items_status ON order_line_items (tenant, status) WHERE status IS NOT NULL;
COMMENT ON TABLE order_line_items IS 'The lines of each order, as listed, with their last polled status and tracking.';
COMMENT ON COLUMN order_line_items.tenant IS 'Tenant (company).';
COMMENT ON COLUMN order_line_items.order_id IS 'Order the line belongs to.';
COMMENT ON COLUMN order_line_items.line_item_id IS 'The platform''s line item id.';
COMMENT ON COLUMN order_line_items.product_id IS 'Product ordered (products.product_id).';
COMMENT ON COLUMN order_line_items.variant_id IS 'Variant ordered.';
COMMENT ON COLUMN order_line_items.title IS 'Line title.';
COMMENT ON COLUMN order_line_items.product_title IS 'Product title at order time.';
COMMENT ON COLUMN order_line_items.variant_title IS 'Variant title at order time.';
COMMENT ON COLUMN order_line_items.quantity IS 'Units ordered.';
COMMENT ON COLUMN order_line_items.price IS 'Unit price charged (unit and currency as the platform uses them).';
COMMENT ON COLUMN order_line_items.retail_price IS 'Unit retail price.';
COMMENT ON COLUMN order_line_items.image_url IS 'Line image URL; empty when none.';
COMMENT ON COLUMN order_line_items.image_aspect_ratio IS 'Line image aspect ratio; NULL when none.';
COMMENT ON COLUMN order_line_items.personalizations IS 'Personalization fields (name, anniversary, birth, work) as returned; NULL when none.';
COMMENT ON COLUMN order_line_items.sha IS 'Personalization sha; empty when none.';
COMMENT ON COLUMN order_line_items.status IS 'Last polled line status (e.g. processing, shipped, canceled); NULL before the first poll.';
COMMENT ON COLUMN order_line_items.tracking_url IS 'Current tracking link; empty when none.';
COMMENT ON COLUMN order_line_items.tracking_number IS 'Current tracking number; empty when none.';
COMMENT ON COLUMN order_line_items.status_observed_at IS 'When the current status was first observed.';
COMMENT ON COLUMN order_line_items.first_seen_at IS 'When hrsync first listed the line.';
COMMENT ON COLUMN order_line_items.updated_at IS 'Last time a column of the row changed.';

CREATE TABLE shipments (
    tenant          text NOT NULL,
    order_id        text NOT NULL,
    line_item_id    text NOT NULL,
    tracking_number text NOT NULL,
    tracking_url    text NOT NULL DEFAULT '',
    first_seen_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant, order_id, line_item_id, tracking_number),
    FOREIGN KEY (tenant, order_id, line_item_id) REFERENCES order_line_items (tenant, order_id, line_item_id) ON DELETE CASCADE
);
COMMENT ON TABLE shipments IS 'Every parcel of a line item (allShipments), by tracking number.';
COMMENT ON COLUMN shipments.tenant IS 'Tenant (company).';
COMMENT ON COLUMN shipments.order_id IS 'Order.';
COMMENT ON COLUMN shipments.line_item_id IS 'Line item shipped.';
COMMENT ON COLUMN shipments.tracking_number IS 'Carrier tracking number; empty when the platform gave none.';
COMMENT ON COLUMN shipments.tracking_url IS 'Tracking link.';
COMMENT ON COLUMN shipments.first_seen_at IS 'When hrsync first saw the parcel.';

CREATE TABLE order_status_history (
    tenant          text NOT NULL,
    order_id        text NOT NULL,
    observed_at     timestamptz NOT NULL,
    status          text NOT NULL,
    previous_status text,
    PRIMARY KEY (tenant, order_id, observed_at),
    FOREIGN KEY (tenant, order_id) REFERENCES orders (tenant, order_id) ON DELETE CASCADE
);
CREATE INDEX order_status_history_status ON order_status_history (tenant, status, observed_at);
COMMENT ON TABLE order_status_history IS 'Each change of an order''s status, with the time hrsync observed it.';
COMMENT ON COLUMN order_status_history.tenant IS 'Tenant (company).';
COMMENT ON COLUMN order_status_history.order_id IS 'Order.';
COMMENT ON COLUMN order_status_history.observed_at IS 'When hrsync observed the new status.';
COMMENT ON COLUMN order_status_history.status IS 'The new status.';
COMMENT ON COLUMN order_status_history.previous_status IS 'The status before; NULL for the first observation.';

CREATE TABLE line_item_status_history (
    tenant          text NOT NULL,
    order_id        text NOT NULL,
    line_item_id    text NOT NULL,
    observed_at     timestamptz NOT NULL,
    status          text NOT NULL,
    previous_status text,
    PRIMARY KEY (tenant, order_id, line_item_id, observed_at),
    FOREIGN KEY (tenant, order_id, line_item_id) REFERENCES order_line_items (tenant, order_id, line_item_id) ON DELETE CASCADE
);
CREATE INDEX line_item_status_history_status ON line_item_status_history (tenant, status, observed_at);
COMMENT ON TABLE line_item_status_history IS 'Each change of a line item''s status, with the time hrsync observed it.';
COMMENT ON COLUMN line_item_status_history.tenant IS 'Tenant (company).';
COMMENT ON COLUMN line_item_status_history.order_id IS 'Order.';
COMMENT ON COLUMN line_item_status_history.line_item_id IS 'Line item.';
COMMENT ON COLUMN line_item_status_history.observed_at IS 'When hrsync observed the new status.';
COMMENT ON COLUMN line_item_status_history.status IS 'The new status.';
COMMENT ON COLUMN line_item_status_history.previous_status IS 'The status before; NULL for the first observation.';

CREATE TABLE products (
    tenant          text NOT NULL,
    product_id      text NOT NULL,
    collection_id   text NOT NULL,
    title           text NOT NULL,
    brand           text,
    model           text,
    status          text NOT NULL,
    creation_status text NOT NULL,
    is_in_stock     boolean NOT NULL,
    is_discontinued boolean NOT NULL,
    min_price       numeric,
    max_price       numeric,
    country_code    text NOT NULL DEFAULT '',
    language        text NOT NULL DEFAULT '',
    raw             jsonb NOT NULL,
    checked_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant, product_id)
);
CREATE INDEX products_checked ON products (tenant, checked_at);
COMMENT ON TABLE products IS 'Each product seen in an order, as last read from the platform (GET product) in the configured country and language.';
COMMENT ON COLUMN products.tenant IS 'Tenant (company).';
COMMENT ON COLUMN products.product_id IS 'The platform''s product id.';
COMMENT ON COLUMN products.collection_id IS 'Collection it was read from.';
COMMENT ON COLUMN products.title IS 'Title in the configured language.';
COMMENT ON COLUMN products.brand IS 'Brand; NULL when none.';
COMMENT ON COLUMN products.model IS 'Model; NULL when none.';
COMMENT ON COLUMN products.status IS 'Active or Draft.';
COMMENT ON COLUMN products.creation_status IS 'Pending, Done or Error.';
COMMENT ON COLUMN products.is_in_stock IS 'In stock when read.';
COMMENT ON COLUMN products.is_discontinued IS 'Discontinued when read.';
COMMENT ON COLUMN products.min_price IS 'Lowest variant price, in country_code when set.';
COMMENT ON COLUMN products.max_price IS 'Highest variant price, in country_code when set.';
COMMENT ON COLUMN products.country_code IS 'Country the prices were asked in (countryCode); empty for none.';
COMMENT ON COLUMN products.language IS 'accept-language the texts were asked in.';
COMMENT ON COLUMN products.raw IS 'The whole product document as returned, for what the columns leave out.';
COMMENT ON COLUMN products.checked_at IS 'Last time hrsync read the product.';
COMMENT ON COLUMN products.updated_at IS 'Last time its content changed.';

CREATE TABLE product_tags (
    tenant     text NOT NULL,
    product_id text NOT NULL,
    tag        text NOT NULL,
    PRIMARY KEY (tenant, product_id, tag),
    FOREIGN KEY (tenant, product_id) REFERENCES products (tenant, product_id) ON DELETE CASCADE
);
CREATE INDEX product_tags_tag ON product_tags (tenant, tag);
COMMENT ON TABLE product_tags IS 'The tags of each product, one row per tag.';
COMMENT ON COLUMN product_tags.tenant IS 'Tenant (company).';
COMMENT ON COLUMN product_tags.product_id IS 'Product.';
COMMENT ON COLUMN product_tags.tag IS 'Tag name.';

CREATE VIEW analyst_people AS
SELECT tenant, external_id, department, location, start_date,
       CASE WHEN departed_at IS NULL THEN 1 ELSE 0 END AS active
FROM people;
COMMENT ON VIEW analyst_people IS 'The people analysts group by, without names or e-mail.';
COMMENT ON COLUMN analyst_people.tenant IS 'Tenant (company).';
COMMENT ON COLUMN analyst_people.external_id IS 'The HR system''s id for the person.';
COMMENT ON COLUMN analyst_people.department IS 'Department as the HR source names it.';
COMMENT ON COLUMN analyst_people.location IS 'Work location as the HR source names it.';
COMMENT ON COLUMN analyst_people.start_date IS 'First working day; NULL when not given.';
COMMENT ON COLUMN analyst_people.active IS '1 while the person is in the HR source, 0 once departed.';

CREATE VIEW analyst_grants AS
SELECT tenant, external_id, reason, occurrence, amount, state, created_at
FROM grants;
COMMENT ON VIEW analyst_grants IS 'Balances granted to people, without names or e-mail.';
COMMENT ON COLUMN analyst_grants.tenant IS 'Tenant (company).';
COMMENT ON COLUMN analyst_grants.external_id IS 'Person granted.';
COMMENT ON COLUMN analyst_grants.reason IS 'Why, e.g. initial.';
COMMENT ON COLUMN analyst_grants.occurrence IS 'Which occurrence of the reason.';
COMMENT ON COLUMN analyst_grants.amount IS 'Credits or gifts granted.';
COMMENT ON COLUMN analyst_grants.state IS 'applied when the platform confirmed it; pending, not_applied, unknown or voided otherwise.';
COMMENT ON COLUMN analyst_grants.created_at IS 'When the grant was first recorded.';

CREATE VIEW order_facts AS
SELECT tenant, order_id, collection_id, order_number, external_id, placed_at, placed_day, placed_month,
       status, is_final, polling_stopped, shipped_at,
       CASE WHEN shipped_at IS NULL THEN NULL
            ELSE EXTRACT(EPOCH FROM (shipped_at - placed_at)) / 86400 END AS days_to_ship,
       EXTRACT(EPOCH FROM (now() - placed_at)) / 86400 AS age_days
FROM orders;
COMMENT ON VIEW order_facts IS 'Orders with derived durations in days, computed the same way on PostgreSQL and SQLite.';
COMMENT ON COLUMN order_facts.tenant IS 'Tenant (company).';
COMMENT ON COLUMN order_facts.order_id IS 'The platform''s order id.';
COMMENT ON COLUMN order_facts.collection_id IS 'Collection the order was placed in.';
COMMENT ON COLUMN order_facts.order_number IS 'The platform''s order number.';
COMMENT ON COLUMN order_facts.external_id IS 'Person who ordered.';
COMMENT ON COLUMN order_facts.placed_at IS 'When the order was placed.';
COMMENT ON COLUMN order_facts.placed_day IS 'UTC calendar day of placed_at.';
COMMENT ON COLUMN order_facts.placed_month IS 'UTC month of placed_at, YYYY-MM.';
COMMENT ON COLUMN order_facts.status IS 'Last status polled.';
COMMENT ON COLUMN order_facts.is_final IS 'True when Shipped with no line item open.';
COMMENT ON COLUMN order_facts.polling_stopped IS 'True when polling stopped before the order was final.';
COMMENT ON COLUMN order_facts.shipped_at IS 'When status Shipped was first observed.';
COMMENT ON COLUMN order_facts.days_to_ship IS 'Days (fractional) from placed_at to shipped_at; NULL until shipped.';
COMMENT ON COLUMN order_facts.age_days IS 'Days (fractional) from placed_at to now.';

CREATE VIEW line_item_facts AS
SELECT li.tenant, li.order_id, li.line_item_id, o.external_id, o.placed_at, o.placed_day, o.placed_month,
       o.shipped_at, li.product_id, li.variant_id, li.product_title, li.variant_title, li.quantity, li.price,
       CASE WHEN li.status = 'canceled' THEN 0 ELSE li.quantity * li.price END AS spent,
       li.status, li.tracking_number
FROM order_line_items li
JOIN orders o ON o.tenant = li.tenant AND o.order_id = li.order_id;
COMMENT ON VIEW line_item_facts IS 'Line items with their order''s person and dates, and the amount spent (0 for a canceled line).';
COMMENT ON COLUMN line_item_facts.tenant IS 'Tenant (company).';
COMMENT ON COLUMN line_item_facts.order_id IS 'Order.';
COMMENT ON COLUMN line_item_facts.line_item_id IS 'Line item.';
COMMENT ON COLUMN line_item_facts.external_id IS 'Person who ordered.';
COMMENT ON COLUMN line_item_facts.placed_at IS 'When the order was placed.';
COMMENT ON COLUMN line_item_facts.placed_day IS 'UTC calendar day the order was placed.';
COMMENT ON COLUMN line_item_facts.placed_month IS 'UTC month the order was placed, YYYY-MM.';
COMMENT ON COLUMN line_item_facts.shipped_at IS 'When the order was first observed Shipped.';
COMMENT ON COLUMN line_item_facts.product_id IS 'Product ordered.';
COMMENT ON COLUMN line_item_facts.variant_id IS 'Variant ordered.';
COMMENT ON COLUMN line_item_facts.product_title IS 'Product title at order time.';
COMMENT ON COLUMN line_item_facts.variant_title IS 'Variant title at order time.';
COMMENT ON COLUMN line_item_facts.quantity IS 'Units ordered.';
COMMENT ON COLUMN line_item_facts.price IS 'Unit price charged.';
COMMENT ON COLUMN line_item_facts.spent IS 'quantity x price, or 0 when the line was canceled.';
COMMENT ON COLUMN line_item_facts.status IS 'Last polled line status.';
COMMENT ON COLUMN line_item_facts.tracking_number IS 'Current tracking number.';

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
