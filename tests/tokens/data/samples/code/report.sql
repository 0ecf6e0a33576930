WITH monthly AS (
    SELECT
        c.region,
        date_trunc('month', o.created_at) AS month,
        SUM(oi.quantity * oi.unit_price) AS revenue,
        COUNT(DISTINCT o.id) AS orders
    FROM orders o
    JOIN customers c ON c.id = o.customer_id
    JOIN order_items oi ON oi.order_id = o.id
    WHERE o.status <> 'cancelled'
      AND o.created_at >= NOW() - INTERVAL '12 months'
    GROUP BY 1, 2
)
SELECT region,
       month,
       revenue,
       orders,
       revenue / NULLIF(orders, 0) AS avg_order_value,
       LAG(revenue) OVER (PARTITION BY region ORDER BY month) AS prev_revenue
FROM monthly
ORDER BY region, month;
